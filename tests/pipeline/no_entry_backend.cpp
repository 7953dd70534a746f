// A shared library that is not a syncscope measured backend (no syncscope_backend_v3):
// the loader must say so and name the file.
extern "C" int syncscope_not_a_backend(void) { return 0; }
