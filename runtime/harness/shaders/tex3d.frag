#version 450
// A 3D texture at (s, t, r), level 0.
layout(binding = 0) uniform sampler3D u_tex;
layout(location = 0) in vec3 v_uvw;
layout(location = 0) out vec4 o_color0;

void main() {
    o_color0 = textureLod(u_tex, v_uvw, 0.0);
}
