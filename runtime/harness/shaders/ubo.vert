#version 450
// A uniform block: a matrix and a colour array indexed by a per-vertex attribute.
layout(std140, binding = 0) uniform Scene {
    mat4 u_mvp;
    vec4 u_colors[4];
};
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec4 a_index;  // x: which colour
layout(location = 0) out vec4 v_color;

void main() {
    v_color = u_colors[int(a_index.x + 0.5)];
    gl_Position = u_mvp * vec4(a_pos, 1.0);
}
