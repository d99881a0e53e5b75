#version 450
// Issue 19: transform feedback into two buffers, one varying each (GL's SEPARATE_ATTRIBS):
// buffer 0 takes v_color (stride 16), buffer 1 takes v_twice = (2 * position, 1).
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec4 a_color;
layout(location = 0, xfb_buffer = 0, xfb_offset = 0, xfb_stride = 16) out vec4 v_color;
layout(location = 1, xfb_buffer = 1, xfb_offset = 0, xfb_stride = 16) out vec4 v_twice;

void main() {
    v_color = a_color;
    v_twice = vec4(a_pos * 2.0, 1.0);
    gl_Position = vec4(a_pos, 1.0);
}
