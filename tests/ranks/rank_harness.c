#include "rank_harness.h"
#include "coll_tool.h"
#include "bootstrap/launch_env.h"
#include "launch/launcher.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The launcher side's init method for the ranks (argv[3] "tcp" or "file"). */
#define RH_ENV_INIT "RH_INIT_METHOD"

int rh_rank, rh_size;
int rh_launch_status;

int rh_launch(int nprocs, char **argv, const char *const *extra_env, int *failed_rank, char *msg,
              size_t msglen)
{
    coll__launch_opts o = {.nprocs = nprocs, .argv = argv, .extra_env = extra_env, .grace_s = 5};
    coll__launch_result res;
    int rc = coll__launch(&o, &res);
    if (rc) {
        snprintf(msg, msglen, "launch failed: %s", coll_strerror(rc));
        return 99;
    }
    if (failed_rank) *failed_rank = res.failed_rank;
    snprintf(msg, msglen, "%s", res.message);
    return res.exit_code;
}

/* A port nobody listens on now: bind 127.0.0.1:0, read it, close. Another
 * process could take it before rank 0 binds it; unlikely enough for a test. */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    int port = -1;
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
        getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
        port = ntohs(sa.sin_port);
    close(fd);
    return port;
}

/* Launcher side: the init method named by kind ("tcp", "file"; NULL or "env":
 * the launcher's own env://) into env_var as RH_INIT_METHOD=URL, and for file://
 * the fresh directory to remove afterwards into dir. 0, or -1 with a message. */
static int init_method_env(const char *kind, char *env_var, size_t len, char *dir, size_t dirlen)
{
    env_var[0] = dir[0] = '\0';
    if (!kind || strcmp(kind, "env") == 0) return 0;
    if (strcmp(kind, "tcp") == 0) {
        int port = free_port();
        if (port <= 0) return fprintf(stderr, "rank harness: no free port for tcp://\n"), -1;
        snprintf(env_var, len, RH_ENV_INIT "=tcp://127.0.0.1:%d", port);
        return 0;
    }
    if (strcmp(kind, "file") == 0) {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, dirlen, "%s/rank-harness.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(dir)) {
            perror("rank harness: mkdtemp");
            dir[0] = '\0';
            return -1;
        }
        snprintf(env_var, len, RH_ENV_INIT "=file://%s/store", dir);
        return 0;
    }
    fprintf(stderr, "rank harness: unknown init method '%s' (env, tcp, file)\n", kind);
    return -1;
}

static void remove_store_dir(const char *dir)
{
    char path[4200];
    if (!*dir) return;
    snprintf(path, sizeof path, "%s/store", dir);
    unlink(path); /* absent when no rank got that far */
    if (rmdir(dir) != 0) perror("rank harness: rmdir of the file store's directory");
}

static int launch_ranks(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 0;
    if (n < 1) {
        fprintf(stderr, "usage: %s NPROCS [BACKEND [env|tcp|file]]\n", argv[0]);
        return 2;
    }
    char env_var[4300], dir[4096], msg[256];
    if (init_method_env(argc > 3 ? argv[3] : NULL, env_var, sizeof env_var, dir, sizeof dir))
        return 2;
    const char *extra_env[] = {env_var[0] ? env_var : NULL, NULL};
    int status = rh_launch(n, argv, extra_env, NULL, msg, sizeof msg);
    remove_store_dir(dir);
    if (status) fprintf(stderr, "%s: %d ranks: %s\n", argv[0], n, msg);
    else
        printf("%s: %d ranks passed%s%s\n", argv[0], n, env_var[0] ? " with " : "",
               env_var[0] ? env_var + strlen(RH_ENV_INIT "=") : "");
    return status;
}

/* Rank side of argv[3]: the method the launcher side chose. MASTER_ADDR/PORT
 * are removed so that only the method can bring the ranks together. */
static int rank_init_method(const char *kind, const char **method)
{
    *method = NULL;
    if (!kind || strcmp(kind, "env") == 0) return 0;
    const char *m = getenv(RH_ENV_INIT);
    if (!m || strncmp(m, kind, strlen(kind)) != 0 || strncmp(m + strlen(kind), "://", 3) != 0) {
        fprintf(stderr, "rank harness: %s=%s does not match init method '%s'\n", RH_ENV_INIT,
                m ? m : "(unset)", kind);
        return -1;
    }
    unsetenv("MASTER_ADDR");
    unsetenv("MASTER_PORT");
    *method = m;
    return 0;
}

coll_comm *rh_start(int argc, char **argv)
{
    coll_launch_env env;
    if (!coll_launch_env_detect(&env)) {
        rh_launch_status = launch_ranks(argc, argv);
        return NULL;
    }
    coll_config cfg;
    coll_config_init(&cfg);
    cfg.backend = argc > 2 ? argv[2] : "tcp";
    cfg.timeout_s = getenv("RH_TIMEOUT_S") ? atof(getenv("RH_TIMEOUT_S")) : 60;
    if (rank_init_method(argc > 3 ? argv[3] : NULL, &cfg.init_method)) {
        rh_launch_status = 2;
        return NULL;
    }
    coll_comm *comm;
    int rc = coll_comm_create(&cfg, &comm);
    if (rc) {
        fprintf(stderr, "rank %d: coll_comm_create: %s: %s\n", env.rank, coll_strerror(rc),
                coll_last_create_error());
        rh_launch_status = 3;
        return NULL;
    }
    rh_rank = coll_comm_rank(comm);
    rh_size = coll_comm_size(comm);
    return comm;
}

int rh_finish(coll_comm *comm, int failures)
{
    int rc = coll_comm_destroy(comm);
    if (rc) {
        fprintf(stderr, "rank %d: coll_comm_destroy: %s\n", rh_rank, coll_strerror(rc));
        failures++;
    }
    return failures ? 1 : 0;
}
