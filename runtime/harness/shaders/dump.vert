#version 450
// Issue 19's word readback: a full-screen quad whose (x, y) in [-1, 1] becomes the cell
// coordinate (0..64 in each axis); each pixel of a 64 x 64 target is one cell.
layout(location = 0) in vec3 a_pos;
layout(location = 0) out vec2 v_cell;

void main() {
    v_cell = (a_pos.xy * 0.5 + 0.5) * 64.0;
    gl_Position = vec4(a_pos, 1.0);
}
