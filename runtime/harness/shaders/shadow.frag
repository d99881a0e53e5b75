#version 450
// A depth texture with compare mode: 1.0 where the reference r passes, else 0.0.
layout(binding = 0) uniform sampler2DShadow u_tex;
layout(location = 0) in vec3 v_uvw;
layout(location = 0) out vec4 o_color0;

void main() {
    float lit = textureLod(u_tex, v_uvw, 0.0);
    o_color0 = vec4(lit, lit, lit, 1.0);
}
