#version 450
// A Minecraft-like terrain fragment shader: the atlas, an alpha test, linear fog.
layout(std140, binding = 0) uniform Frame {
    mat4 u_proj;
    mat4 u_modelview;
    vec4 u_fog_color;
    vec4 u_fog_range;
};
layout(binding = 2) uniform sampler2D u_atlas;  // 1: the vertex stage's default block
layout(location = 0) in vec3 v_uvw;
layout(location = 1) in float v_fog;
layout(location = 0) out vec4 o_color0;

void main() {
    vec4 c = texture(u_atlas, v_uvw.xy);
    if (c.a < 0.5) {
        discard;
    }
    o_color0 = vec4(mix(c.rgb, u_fog_color.rgb, v_fog), c.a);
}
