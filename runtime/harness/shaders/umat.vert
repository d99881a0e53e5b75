#version 450
// Default-block uniforms (glslang -R: gl_DefaultUniformBlock): a matrix and a tint.
uniform mat4 u_mvp;
uniform vec4 u_tint;
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec4 a_color;
layout(location = 0) out vec4 v_color;

void main() {
    v_color = a_color * u_tint;
    gl_Position = u_mvp * vec4(a_pos, 1.0);
}
