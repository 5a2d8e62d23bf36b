/* png_info FILE: prints "WIDTH HEIGHT" read from the PNG's IHDR chunk (exit 1
 * when FILE is not a PNG). png_info --colours FILE: prints how many distinct
 * colours the decoded image has (needs cairo; exit 77 without it), so a test
 * can tell a blank screenshot from a page that shows something. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_CAIRO
#include <cairo.h>
#endif

static int ihdr(const char *path)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    unsigned char h[24];
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    size_t n = fread(h, 1, sizeof h, f);
    fclose(f);
    if (n != sizeof h || memcmp(h, sig, 8) != 0 || memcmp(h + 12, "IHDR", 4) != 0) {
        fprintf(stderr, "%s: not a PNG (no signature + IHDR)\n", path);
        return 1;
    }
    uint32_t w = (uint32_t)h[16] << 24 | (uint32_t)h[17] << 16 | (uint32_t)h[18] << 8 | h[19];
    uint32_t ht = (uint32_t)h[20] << 24 | (uint32_t)h[21] << 16 | (uint32_t)h[22] << 8 | h[23];
    printf("%u %u\n", w, ht);
    return 0;
}

#ifdef HAVE_CAIRO
static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int colours(const char *path)
{
    cairo_surface_t *s = cairo_image_surface_create_from_png(path);
    if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
        fprintf(stderr, "%s: cannot decode: %s\n", path,
                cairo_status_to_string(cairo_surface_status(s)));
        cairo_surface_destroy(s);
        return 1;
    }
    int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
    int stride = cairo_image_surface_get_stride(s);
    const unsigned char *data = cairo_image_surface_get_data(s);
    uint32_t *px = malloc((size_t)w * (size_t)h * sizeof *px);
    if (!px) return 1;
    for (int y = 0; y < h; y++)
        memcpy(px + (size_t)y * w, data + (size_t)y * stride, (size_t)w * 4);
    size_t n = (size_t)w * h, distinct = n ? 1 : 0;
    qsort(px, n, sizeof *px, cmp_u32);
    for (size_t i = 1; i < n; i++) distinct += px[i] != px[i - 1];
    printf("%zu\n", distinct);
    free(px);
    cairo_surface_destroy(s);
    return 0;
}
#endif

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--colours") == 0) {
#ifdef HAVE_CAIRO
        return colours(argv[2]);
#else
        fprintf(stderr, "png_info: built without cairo, cannot decode %s\n", argv[2]);
        return 77;
#endif
    }
    if (argc != 2) {
        fprintf(stderr, "usage: png_info [--colours] FILE.png\n");
        return 2;
    }
    return ihdr(argv[1]);
}
