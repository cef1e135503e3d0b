/* The C API from a C-only project: backward-data of one small NHWC layer on the host (exec NULL),
 * checked against a direct loop, and a bad problem refused with a message naming the field.
 * Exit code 0 when both hold. */
#include <convbwd/convbwd.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { N = 1, C = 4, H = 6, W = 5, K = 3, R = 3, S = 3 }; /* pad 1, stride 1: P = H, Q = W */

int main(void) {
    static float dy[N * H * W * K], w[K * R * S * C], dx[N * H * W * C];
    for (int i = 0; i < N * H * W * K; i++) dy[i] = (float)((i * 7) % 5) - 2.0f;
    for (int i = 0; i < K * R * S * C; i++) w[i] = (float)((i * 3) % 5) - 2.0f;
    convbwd_problem p;
    memset(&p, 0, sizeof p);
    p.n = N, p.c = C, p.h = H, p.w = W, p.k = K, p.r = R, p.s = S, p.groups = 1;
    p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = 1;
    p.stride_h = p.stride_w = 1, p.dilation_h = p.dilation_w = 1;
    convbwd_tensor tdy = {dy, CONVBWD_F32, CONVBWD_NHWC, {0, 0, 0, 0}};
    convbwd_tensor tw = {w, CONVBWD_F32, CONVBWD_NHWC, {0, 0, 0, 0}};
    convbwd_tensor tdx = {dx, CONVBWD_F32, CONVBWD_NHWC, {0, 0, 0, 0}};
    if (convbwd_bwd_data(&p, &tdy, &tw, &tdx, 1.0f, 0.0f, NULL) != CONVBWD_SUCCESS) {
        fprintf(stderr, "convbwd: %s\n", convbwd_last_error());
        return 1;
    }
    /* dx[n][y][x][c] = sum over k, r, s of dy[n][y+1-r][x+1-s][k] * w[k][r][s][c] (NHWC, KYXC). */
    int bad = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            for (int c = 0; c < C; c++) {
                double want = 0;
                for (int k = 0; k < K; k++)
                    for (int r = 0; r < R; r++)
                        for (int s = 0; s < S; s++) {
                            int py = y + 1 - r, qx = x + 1 - s;
                            if (py < 0 || py >= H || qx < 0 || qx >= W) continue;
                            want += dy[(py * W + qx) * K + k] * w[((k * R + r) * S + s) * C + c];
                        }
                if (fabs(dx[(y * W + x) * C + c] - want) > 0) bad++;
            }
    p.stride_h = 0;
    int refused = convbwd_bwd_data(&p, &tdy, &tw, &tdx, 1.0f, 0.0f, NULL) == CONVBWD_BAD_PARAM &&
                  strstr(convbwd_last_error(), "stride_h") != NULL;
    printf("C example: %d of %d dx elements differ from the direct loop; stride 0 %s\n", bad, N * H * W * C,
           refused ? "refused naming stride_h" : "NOT refused");
    return bad == 0 && refused ? 0 : 1;
}
