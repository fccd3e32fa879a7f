/* A small program of our own that needs libpng and zlib from a foreign sysroot: it encodes an
 * image as PNG in memory with libpng, decodes it again and compares the pixels ("png"), and
 * round-trips a buffer through zlib ("zlib"). Exit 0 when the check passes. */
#include <png.h>
#include <zlib.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { k_side = 16 };

struct Buffer {
    unsigned char* data;
    size_t size, pos;
};

static void write_cb(png_structp png, png_bytep data, png_size_t n) {
    struct Buffer* b = png_get_io_ptr(png);
    b->data = realloc(b->data, b->size + n);
    memcpy(b->data + b->size, data, n);
    b->size += n;
}

static void read_cb(png_structp png, png_bytep data, png_size_t n) {
    struct Buffer* b = png_get_io_ptr(png);
    if (b->pos + n > b->size) {
        png_error(png, "read past the end");
    }
    memcpy(data, b->data + b->pos, n);
    b->pos += n;
}

static void fill(unsigned char rows[k_side][k_side * 3]) {
    for (int y = 0; y < k_side; ++y) {
        for (int x = 0; x < k_side; ++x) {
            rows[y][x * 3] = (unsigned char)(x * 16);
            rows[y][x * 3 + 1] = (unsigned char)(y * 16);
            rows[y][x * 3 + 2] = (unsigned char)(x ^ y);
        }
    }
}

static int encode(struct Buffer* out, unsigned char rows[k_side][k_side * 3]) {
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    if (setjmp(png_jmpbuf(png))) {
        return 1;
    }
    png_set_write_fn(png, out, write_cb, NULL);
    png_set_IHDR(png, info, k_side, k_side, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_bytep ptrs[k_side];
    for (int y = 0; y < k_side; ++y) {
        ptrs[y] = rows[y];
    }
    png_set_rows(png, info, ptrs);
    png_write_png(png, info, PNG_TRANSFORM_IDENTITY, NULL);
    png_destroy_write_struct(&png, &info);
    return 0;
}

static int decode(struct Buffer* in, unsigned char rows[k_side][k_side * 3]) {
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    if (setjmp(png_jmpbuf(png))) {
        return 1;
    }
    png_set_read_fn(png, in, read_cb);
    png_read_png(png, info, PNG_TRANSFORM_IDENTITY, NULL);
    if (png_get_image_width(png, info) != k_side || png_get_image_height(png, info) != k_side) {
        return 1;
    }
    png_bytepp got = png_get_rows(png, info);
    for (int y = 0; y < k_side; ++y) {
        memcpy(rows[y], got[y], k_side * 3);
    }
    png_destroy_read_struct(&png, &info, NULL);
    return 0;
}

static int check_png(void) {
    static unsigned char want[k_side][k_side * 3], got[k_side][k_side * 3];
    struct Buffer buf = {NULL, 0, 0};
    fill(want);
    if (encode(&buf, want) != 0 || buf.size < 8 || png_sig_cmp(buf.data, 0, 8) != 0) {
        fprintf(stderr, "png: encoding failed\n");
        return 1;
    }
    if (decode(&buf, got) != 0 || memcmp(want, got, sizeof want) != 0) {
        fprintf(stderr, "png: decoded pixels differ\n");
        return 1;
    }
    printf("png ok: libpng %s, %zu bytes\n", png_get_libpng_ver(NULL), buf.size);
    free(buf.data);
    return 0;
}

static int check_zlib(void) {
    unsigned char text[4096], packed[8192], back[4096];
    for (size_t i = 0; i < sizeof text; ++i) {
        text[i] = (unsigned char)("emurun "[i % 7]);
    }
    uLongf packed_len = sizeof packed, back_len = sizeof back;
    if (compress(packed, &packed_len, text, sizeof text) != Z_OK ||
        uncompress(back, &back_len, packed, packed_len) != Z_OK || back_len != sizeof text ||
        memcmp(text, back, sizeof text) != 0) {
        fprintf(stderr, "zlib: round trip failed\n");
        return 1;
    }
    printf("zlib ok: zlib %s, %lu -> %lu bytes\n", zlibVersion(), (unsigned long)sizeof text,
           (unsigned long)packed_len);
    return 0;
}

int main(int argc, char** argv) {
    const char* what = argc > 1 ? argv[1] : "all";
    int rc = 0;
    if (strcmp(what, "png") == 0 || strcmp(what, "all") == 0) {
        rc |= check_png();
    }
    if (strcmp(what, "zlib") == 0 || strcmp(what, "all") == 0) {
        rc |= check_zlib();
    }
    return rc;
}
