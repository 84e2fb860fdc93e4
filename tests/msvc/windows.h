/* Stand-in for <windows.h>: the types, constants and functions shared_ring.h
   uses, declared as the Windows SDK declares them (x64). For the MSVC-mode
   compile check in tests/matrix.sh; nothing here is linked or run. */
#ifndef SRNG_STANDIN_WINDOWS_H
#define SRNG_STANDIN_WINDOWS_H
#include <stddef.h>

#define WINAPI __stdcall
#define WINBASEAPI __declspec(dllimport)
#define CONST const
typedef void VOID;
typedef int BOOL;
typedef unsigned char BYTE;
typedef unsigned short WORD;
typedef unsigned long DWORD;
typedef long LONG;
typedef unsigned int UINT;
typedef unsigned long long ULONG_PTR, SIZE_T, DWORD64;
typedef void *HANDLE, *PVOID, *LPVOID;
typedef const void *LPCVOID;
typedef wchar_t WCHAR;
typedef WCHAR *LPWSTR;
typedef const WCHAR *LPCWSTR;
typedef const char *LPCSTR;
typedef char *LPSTR;
typedef DWORD *LPDWORD;
typedef BOOL *LPBOOL;
typedef union _LARGE_INTEGER {
    struct {
        DWORD LowPart;
        LONG HighPart;
    } u;
    long long QuadPart;
} LARGE_INTEGER;
typedef struct _FILETIME {
    DWORD dwLowDateTime;
    DWORD dwHighDateTime;
} FILETIME, *LPFILETIME;
typedef struct _SECURITY_ATTRIBUTES SECURITY_ATTRIBUTES, *LPSECURITY_ATTRIBUTES;
typedef struct _MEMORY_BASIC_INFORMATION {
    PVOID BaseAddress;
    PVOID AllocationBase;
    DWORD AllocationProtect;
    WORD PartitionId;
    SIZE_T RegionSize;
    DWORD State;
    DWORD Protect;
    DWORD Type;
} MEMORY_BASIC_INFORMATION, *PMEMORY_BASIC_INFORMATION;

#define TRUE 1
#define FALSE 0
#define INFINITE 0xFFFFFFFFu
#define INVALID_HANDLE_VALUE ((HANDLE)(long long)-1)
#define WAIT_OBJECT_0 0x00000000L
#define WAIT_TIMEOUT 258L
#define WAIT_FAILED ((DWORD)0xFFFFFFFF)
#define SYNCHRONIZE 0x00100000L
#define PROCESS_QUERY_LIMITED_INFORMATION 0x1000
#define PAGE_READWRITE 0x04
#define FILE_MAP_ALL_ACCESS 0xF001F
#define FILE_MAP_WRITE 0x0002
#define FILE_MAP_READ 0x0004
#define ERROR_FILE_NOT_FOUND 2L
#define ERROR_INVALID_PARAMETER 87L
#define ERROR_ALREADY_EXISTS 183L
#define ERROR_TIMEOUT 1460L
#define ERROR_ACCESS_DENIED 5L
#define ERROR_NOT_ENOUGH_MEMORY 8L
#define CP_UTF8 65001
#define MB_ERR_INVALID_CHARS 0x00000008

WINBASEAPI DWORD WINAPI GetCurrentProcessId(void);
WINBASEAPI HANDLE WINAPI GetCurrentProcess(void);
WINBASEAPI HANDLE WINAPI OpenProcess(DWORD access, BOOL inherit, DWORD pid);
WINBASEAPI DWORD WINAPI WaitForSingleObject(HANDLE h, DWORD ms);
WINBASEAPI BOOL WINAPI GetProcessTimes(HANDLE h, LPFILETIME created, LPFILETIME exited,
                                       LPFILETIME kernel, LPFILETIME user);
WINBASEAPI BOOL WINAPI CloseHandle(HANDLE h);
WINBASEAPI DWORD WINAPI GetLastError(void);
WINBASEAPI BOOL WINAPI QueryPerformanceCounter(LARGE_INTEGER *count);
WINBASEAPI BOOL WINAPI QueryPerformanceFrequency(LARGE_INTEGER *frequency);
WINBASEAPI void WINAPI Sleep(DWORD ms);
WINBASEAPI BOOL WINAPI WaitOnAddress(volatile void *addr, PVOID compare, SIZE_T size, DWORD ms);
WINBASEAPI void WINAPI WakeByAddressAll(PVOID addr);
WINBASEAPI HANDLE WINAPI CreateFileMappingW(HANDLE file, LPSECURITY_ATTRIBUTES attributes,
                                            DWORD protect, DWORD size_high, DWORD size_low,
                                            LPCWSTR name);
WINBASEAPI HANDLE WINAPI CreateEventW(LPSECURITY_ATTRIBUTES attributes, BOOL manual_reset,
                                      BOOL initial_state, LPCWSTR name);
WINBASEAPI BOOL WINAPI SetEvent(HANDLE event);
WINBASEAPI BOOL WINAPI ResetEvent(HANDLE event);
WINBASEAPI HANDLE WINAPI OpenFileMappingW(DWORD access, BOOL inherit, LPCWSTR name);
WINBASEAPI LPVOID WINAPI MapViewOfFile(HANDLE mapping, DWORD access, DWORD offset_high,
                                       DWORD offset_low, SIZE_T bytes);
WINBASEAPI BOOL WINAPI UnmapViewOfFile(LPCVOID base);
WINBASEAPI SIZE_T WINAPI VirtualQuery(LPCVOID address, PMEMORY_BASIC_INFORMATION info,
                                      SIZE_T length);
WINBASEAPI int WINAPI MultiByteToWideChar(UINT code_page, DWORD flags, LPCSTR text, int bytes,
                                          LPWSTR wide, int wide_chars);
/* An intrinsic in the SDK (winnt.h): the x86 pause instruction. */
void _mm_pause(void);
#define YieldProcessor _mm_pause
#endif
