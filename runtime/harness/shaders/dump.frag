#version 450
// Issue 19's word readback: cell (x, y) shows word y * 64 + x of the storage buffer at
// binding 2 as its four bytes (R = bits 0..7, ..., A = bits 24..31); past the end, zero.
layout(std430, binding = 2) readonly buffer Dump {
    uint words[];
};
layout(location = 0) in vec2 v_cell;
layout(location = 0) out vec4 o_color0;

void main() {
    int i = int(v_cell.y) * 64 + int(v_cell.x);
    o_color0 = i < words.length() ? unpackUnorm4x8(words[i]) : vec4(0.0);
}
