#version 450
// Issue 19: every invocation writes one word of a known pattern into a storage buffer:
// words[i] = (i * 2654435761) ^ 0x5A5A0000 (32-bit wrap), i = the global invocation x.
layout(local_size_x = 8, local_size_y = 1, local_size_z = 1) in;
layout(std430, binding = 1) buffer Words {
    uint words[];
};

void main() {
    uint i = gl_GlobalInvocationID.x;
    words[i] = (i * 2654435761u) ^ 0x5A5A0000u;
}
