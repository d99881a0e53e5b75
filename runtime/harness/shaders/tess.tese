#version 450
// Issue 19: the quad domain; the position is the bilinear blend of control points 0..3
// (corners (0,0), (1,0), (1,1), (0,1) of the domain) and the colour is (u, v, 0, 1), so a
// pixel shows where in the domain it lies.
layout(quads, equal_spacing, ccw) in;
layout(location = 0) out vec4 v_color;

void main() {
    float u = gl_TessCoord.x, v = gl_TessCoord.y;
    vec4 bottom = mix(gl_in[0].gl_Position, gl_in[1].gl_Position, u);
    vec4 top = mix(gl_in[3].gl_Position, gl_in[2].gl_Position, u);
    gl_Position = mix(bottom, top, v);
    v_color = vec4(u, v, 0.0, 1.0);
}
