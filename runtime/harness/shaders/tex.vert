#version 450
// Position and a texture coordinate (s, t, r / layer / lod / depth reference) per vertex.
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec3 a_uvw;
layout(location = 0) out vec3 v_uvw;

void main() {
    v_uvw = a_uvw;
    gl_Position = vec4(a_pos, 1.0);
}
