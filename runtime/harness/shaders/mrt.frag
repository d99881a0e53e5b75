#version 450
// Two draw buffers: 0 gets the colour, 1 its complement (1 - rgb, same alpha).
layout(location = 0) in vec4 v_color;
layout(location = 0) out vec4 o_color0;
layout(location = 1) out vec4 o_color1;

void main() {
    o_color0 = v_color;
    o_color1 = vec4(vec3(1.0) - v_color.rgb, v_color.a);
}
