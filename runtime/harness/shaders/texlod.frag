#version 450
// A 2D texture at (s, t), mip level r (textureLod: no derivatives).
layout(binding = 0) uniform sampler2D u_tex;
layout(location = 0) in vec3 v_uvw;
layout(location = 0) out vec4 o_color0;

void main() {
    o_color0 = textureLod(u_tex, v_uvw.xy, v_uvw.z);
}
