/* A C program using libcubego through the header the wheel ships
 * (docs/capi.md, "Using the library from C"). tests/test_packaging.py compiles
 * and runs it against the library of a freshly built wheel:
 *
 *   PKG=$(python -c 'import cubego, os; print(os.path.dirname(cubego.__file__))')
 *   cc capi_example.c -I"$PKG/include" -L"$PKG" -lcubego -Wl,-rpath,"$PKG" -o capi_example
 *   ./capi_example
 *
 * It checks the ABI version, prints the library's version, then computes
 * sum(arange(10)) in chunks of 4 (a tree reduction run by the engine) and
 * prints 45.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libcubego.h"

/* Print a failed call's message, free it, and exit. */
static void check(int32_t status, char *err, const char *what) {
    if (status == 0)
        return;
    fprintf(stderr, "%s failed with status %d: %s\n", what, (int)status, err ? err : "");
    cg_free(err);
    exit(1);
}

/* The handle of the first array in a {"arrays": [{"handle": N, ...}]} result.
 * (A real program would use a JSON parser; this one needs a single number.) */
static uint64_t first_handle(char *result_json) {
    const char *p = strstr(result_json, "\"handle\":");
    uint64_t h = p ? strtoull(p + strlen("\"handle\":"), NULL, 10) : 0;
    cg_free(result_json);
    return h;
}

int main(void) {
    /* 1. The library this program loaded speaks the ABI it was compiled for:
     *    the same major, and at least the minor of the header. */
    int32_t abi = cg_abi_version();
    if (abi / 1000 != CG_ABI_VERSION_MAJOR || abi % 1000 < CG_ABI_VERSION_MINOR) {
        fprintf(stderr, "libcubego has ABI %d.%d; this program needs %d.x with x >= %d\n",
                (int)(abi / 1000), (int)(abi % 1000), CG_ABI_VERSION_MAJOR, CG_ABI_VERSION_MINOR);
        return 1;
    }
    printf("abi %d.%d\n", (int)(abi / 1000), (int)(abi % 1000));

    char *version = NULL;
    check(cg_version(&version), NULL, "cg_version");
    printf("version %s\n", version);
    cg_free(version);

    /* 2. Build sum(arange(10)) lazily: arrays are handles, arguments JSON. */
    char *result = NULL, *err = NULL;
    check(cg_op("arange",
                "{\"start\": 0, \"stop\": 10, \"step\": 1, \"dtype\": \"int64\", \"chunks\": 4}",
                NULL, 0, &result, &err),
          err, "cg_op(arange)");
    uint64_t a = first_handle(result);
    check(cg_op("reduce", "{\"func\": \"sum\", \"axis\": null, \"keepdims\": false}", &a, 1,
                &result, &err),
          err, "cg_op(reduce)");
    uint64_t total = first_handle(result);

    /* 3. Compute: start, wait (in slices, as Python does to stay interruptible), read. */
    uint64_t job = 0;
    check(cg_compute_start(&total, 1, "{}", &job, &err), err, "cg_compute_start");
    int32_t done = 0;
    while (!done)
        check(cg_job_wait(job, 100, &done, &err), err, "cg_job_wait");
    int64_t value = 0;
    check(cg_job_read(job, 0, &value, sizeof value, &err), err, "cg_job_read");
    printf("sum %" PRId64 "\n", value);

    /* 4. Release every handle once; remove this process's intermediates. */
    cg_job_release(job);
    cg_array_release(total);
    cg_array_release(a);
    cg_shutdown();
    return value == 45 ? 0 : 1;
}
