#version 450
// Position and colour per vertex, plus a per-instance offset in x/y (divisor 1).
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec4 a_color;
layout(location = 2) in vec2 a_offset;
layout(location = 0) out vec4 v_color;

void main() {
    v_color = a_color;
    gl_Position = vec4(a_pos.xy + a_offset, a_pos.z, 1.0);
}
