#version 450
// Issue 19: one atomic-counter increment per fragment (counter binding 3, offset 0), then
// the interpolated colour.
layout(binding = 3, offset = 0) uniform atomic_uint u_fragments;
layout(location = 0) in vec4 v_color;
layout(location = 0) out vec4 o_color0;

void main() {
    atomicCounterIncrement(u_fragments);
    o_color0 = v_color;
}
