/* Stand-in for the MSVC C library's <assert.h> (see string.h here). */
#undef assert
void __cdecl _wassert(const unsigned short *message, const unsigned short *file, unsigned line);
#ifdef NDEBUG
#define assert(e) ((void)0)
#else
#define assert(e) ((void)((!!(e)) || (_wassert(0, 0, (unsigned)__LINE__), 0)))
#endif
