#version 450
// Issue 19: transform feedback with a hole (GL's gl_SkipComponents4): stride 48, v_color
// at offset 0, v_twice at offset 32; bytes 16..31 of every vertex keep what the buffer held.
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec4 a_color;
layout(location = 0, xfb_buffer = 0, xfb_offset = 0, xfb_stride = 48) out vec4 v_color;
layout(location = 1, xfb_buffer = 0, xfb_offset = 32) out vec4 v_twice;

void main() {
    v_color = a_color;
    v_twice = vec4(a_pos * 2.0, 1.0);
    gl_Position = vec4(a_pos, 1.0);
}
