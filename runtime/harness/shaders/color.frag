#version 450
// Writes the interpolated colour to draw buffer 0.
layout(location = 0) in vec4 v_color;
layout(location = 0) out vec4 o_color0;

void main() {
    o_color0 = v_color;
}
