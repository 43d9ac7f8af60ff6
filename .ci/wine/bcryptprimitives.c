/* ProcessPrng, which Rust's standard library (1.78 and later) imports from
 * bcryptprimitives.dll on Windows, for Wine releases that lack it (Debian 12
 * ships Wine 8.0). Only for running the Windows builds under Wine here:
 * Windows 10 and 11 have the real DLL. Built by .ci/windows-under-wine with
 * mingw-w64 and put beside the .exe files, where Windows looks first. */
#include <windows.h>
#define SystemFunction036 NTAPI SystemFunction036
#include <ntsecapi.h>
#undef SystemFunction036

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!RtlGenRandom(data, chunk))
            return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
