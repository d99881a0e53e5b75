#version 450
// Issue 19: a compute shader writes a quad's 16-bit index list 0 1 2 0 2 3 into the buffer a
// draw then reads as its index buffer; word i packs indices 2i (low half) and 2i + 1.
layout(local_size_x = 1, local_size_y = 1, local_size_z = 1) in;
layout(std430, binding = 1) buffer Indices {
    uint words[];
};
const uint quad[6] = uint[6](0u, 1u, 2u, 0u, 2u, 3u);

void main() {
    uint i = gl_GlobalInvocationID.x;
    words[i] = quad[2u * i] | (quad[2u * i + 1u] << 16);
}
