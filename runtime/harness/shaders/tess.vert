#version 450
// Issue 19's tessellation: control points pass through (position only).
layout(location = 0) in vec3 a_pos;

void main() {
    gl_Position = vec4(a_pos, 1.0);
}
