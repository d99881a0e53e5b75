#version 450
// Issue 19: transform feedback of two varyings into buffer 0, packed (stride 32):
// v_color (offset 0) = the colour attribute, v_twice (offset 16) = (2 * position, 1).
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec4 a_color;
layout(location = 0, xfb_buffer = 0, xfb_offset = 0, xfb_stride = 32) out vec4 v_color;
layout(location = 1, xfb_buffer = 0, xfb_offset = 16) out vec4 v_twice;

void main() {
    v_color = a_color;
    v_twice = vec4(a_pos * 2.0, 1.0);
    gl_Position = vec4(a_pos, 1.0);
}
