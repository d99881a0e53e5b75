#version 450
// Issue 19's capture programs: the colour to draw buffer 0; v_twice (location 1, what the
// vertex stage captures beside it) is declared so every vertex output has its consumer.
layout(location = 0) in vec4 v_color;
layout(location = 1) in vec4 v_twice;
layout(location = 0) out vec4 o_color0;

void main() {
    o_color0 = v_color;
}
