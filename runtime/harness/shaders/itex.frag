#version 450
// An unsigned-integer texture fetched at texel (s, t), level 0; each channel / 255.
layout(binding = 0) uniform usampler2D u_tex;
layout(location = 0) in vec3 v_uvw;
layout(location = 0) out vec4 o_color0;

void main() {
    uvec4 v = texelFetch(u_tex, ivec2(v_uvw.xy), 0);
    o_color0 = vec4(v) / 255.0;
}
