#version 450
// Issue 19: imageStore of a known pattern into an 8 x 8 RGBA8 image at unit 4:
// texel (x, y) = (32 x, 32 y, 200, 255) / 255.
layout(local_size_x = 4, local_size_y = 4, local_size_z = 1) in;
layout(rgba8, binding = 4) writeonly uniform image2D u_dst;

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    imageStore(u_dst, p, vec4(float(32 * p.x), float(32 * p.y), 200.0, 255.0) / 255.0);
}
