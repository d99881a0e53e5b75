#version 450
// Issue 19: imageLoad from unit 4, imageStore into unit 5 with the channels reversed
// (r, g, b, a) -> (a, b, g, r) and the texel mirrored in x (x -> 7 - x).
layout(local_size_x = 4, local_size_y = 4, local_size_z = 1) in;
layout(rgba8, binding = 4) readonly uniform image2D u_src;
layout(rgba8, binding = 5) writeonly uniform image2D u_dst;

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    imageStore(u_dst, ivec2(7 - p.x, p.y), imageLoad(u_src, p).abgr);
}
