#version 450
// A Minecraft-like chunk vertex shader: a frame uniform block (projection, model-view,
// fog) and a per-chunk default-block uniform (the chunk offset, glslang -R).
layout(std140, binding = 0) uniform Frame {
    mat4 u_proj;
    mat4 u_modelview;
    vec4 u_fog_color;
    vec4 u_fog_range;  // x: start, y: end (view depth)
};
uniform vec4 u_chunk_offset;
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec3 a_uvw;  // s, t of the atlas
layout(location = 0) out vec3 v_uvw;
layout(location = 1) out float v_fog;

void main() {
    vec4 view = u_modelview * vec4(a_pos + u_chunk_offset.xyz, 1.0);
    v_uvw = a_uvw;
    v_fog = clamp((abs(view.z) - u_fog_range.x) / (u_fog_range.y - u_fog_range.x), 0.0, 1.0);
    gl_Position = u_proj * view;
}
