/*
 * mptcplab kernel backend: the link emulator's forwarder.
 *
 * One process in the run's router namespace. It moves Ethernet frames between
 * AF_PACKET sockets and so joins the client's per-path interfaces, one "wire"
 * per scenario link and the server's interface:
 *
 *   client port of path p --> link 1 --> link 2 ... --> server port      (forward)
 *   server port --> ... link 2 --> link 1 --> client port of path p      (reverse)
 *
 * A link is a veth pair (a, b) inside the router namespace; this program is the link
 * (emulator revision 6): per link and direction a Bernoulli loss drawn when a frame
 * enters it, a DropTail queue in front of a serialiser at the link's rate (a frame
 * leaves at d = max(arrival, d_prev) + len / rate, as the simulator's link and seed
 * 001's ns-3 links send, and the queue holds the frames not yet sent: packets or IP
 * bytes, as the scenario's limit), then the propagation delay (release = d + delay),
 * served with a nanosecond ppoll timeout, then the send into the wire. The wire's
 * qdisc never binds (the Python side sets a long pfifo); the frame comes out of the
 * other end of the wire and goes on to the next link of its path. Revisions 4-5 let
 * htb pace the wire instead, and htb charges a frame after sending it, so a short
 * frame behind a full one left a full frame time after it instead of its own
 * (docs/kernel.md, "The deadlock rows' gap is in the emulator"). Paths are told
 * apart by the client address (source address forward, destination address
 * reverse), so several paths may share a link.
 *
 * Config (argv[1], one item a line):
 *   seed S                (the run's seed, for the record: the loss streams come with each link)
 *   port NAME                                   (ports are numbered in order from 0)
 *   link A_PORT B_PORT FDELAY_NS FLOSS RDELAY_NS RLOSS FSTREAM RSTREAM FRATE RRATE FLIMIT FUNIT RLIMIT RUNIT
 *        (LIMIT/UNIT: the DropTail limit, in packets "p" or IP bytes "b")
 *        (FSTREAM/RSTREAM: the 64-bit state the direction's loss generator is expanded
 *        from, the simulator's stream "link/<name>/<dir>/loss" of the run's seed
 *        (crates/mptcplab-core/src/rng.rs), so both backends drop the same frames)
 *   path CLIENT_IP CLIENT_PORT SERVER_PORT NF L.. NR L..
 *        (forward links client->server, reverse links server->client, by link index)
 *   pcap PATH FILE        (capture PATH's frames where they leave and reach the client,
 *                          first 128 bytes, in the classic pcap format, pcap-savefile(5))
 * Control on stdin: "delay L f|r NS", "loss L f|r P", "rate L f|r BPS", "state L f|r 0|1", "stats"
 * (answers one "link L DIR in lost down qdrop out held qpkts qbytes" line a link and direction,
 * then "end"). End of stdin = exit 0.
 *
 * It exits (status 3) on any socket error other than a full queue, when its parent
 * dies (PR_SET_PDEATHSIG, see prctl(2)) and when its stdin closes, so that it can
 * never spin alone after a run: `ip netns del` does not stop processes.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23 /* linux/if_packet.h since 4.20 */
#endif

#define MAX_PORTS 128
#define MAX_LINKS 60
#define MAX_PATHS 32
#define MAX_HOPS 16
#define FRAME_MAX 2048
#define HELD_MAX 400000 /* frames in all delay lines together */

enum { FWD = 0, REV = 1 };

struct pkt {
    struct pkt *next;
    int64_t release_ns;
    int64_t start_ns, depart_ns; /* on the serialiser: from, until (its last bit leaves) */
    uint32_t path;
    uint16_t len;
    uint8_t data[FRAME_MAX];
};

struct dirline { /* one direction of one link */
    int64_t delay_ns;
    double rate_bps; /* the link's rate: the serialiser's */
    double loss;
    int up;
    uint64_t rng[4];
    struct pkt *head, *tail;
    uint64_t in, lost, down, qdrop, out, held;
    /* The DropTail queue: the frames from `qhead` on have not left the serialiser
     * (`depart_ns` > now at the last look); their count and IP bytes, the limit. */
    struct pkt *qhead;
    uint64_t qpkts, qbytes, qlimit;
    int qlimit_bytes;
    int64_t busy_ns; /* when the serialiser is free */
};

struct link {
    int a, b; /* ports: forward enters at a and leaves at b, reverse the other way */
    struct dirline d[2];
};

struct path {
    uint32_t client_ip; /* network order */
    int client_port, server_port;
    int n[2];
    int hop[2][MAX_HOPS];
    FILE *pcap; /* optional capture at the client side of the path */
};

static int nports, nlinks, npaths;
static char port_name[MAX_PORTS][IFNAMSIZ];
static int port_fd[MAX_PORTS];
static int port_ifindex[MAX_PORTS];
static struct link links[MAX_LINKS];
static struct path paths[MAX_PATHS];
static uint64_t held_total, held_overflow;
static uint64_t seed = 1;

static void die(const char *what, int err) {
    fprintf(stderr, "forwarder: %s: %s\n", what, strerror(err));
    exit(3);
}

#define PCAP_SNAPLEN 128

static void pcap_open(struct path *p, const char *file) {
    p->pcap = fopen(file, "w");
    if (!p->pcap) die(file, errno);
    /* magic (nanosecond timestamps), version 2.4, tz 0, sigfigs 0, snaplen, Ethernet */
    uint32_t hdr[6] = {0xa1b23c4d, 0x00040002, 0, 0, PCAP_SNAPLEN, 1};
    fwrite(hdr, sizeof hdr, 1, p->pcap);
}

static void pcap_write(struct path *p, const uint8_t *data, size_t len, int64_t t) {
    if (!p->pcap) return;
    uint32_t cap = len < PCAP_SNAPLEN ? (uint32_t)len : PCAP_SNAPLEN;
    uint32_t rec[4] = {(uint32_t)(t / 1000000000LL), (uint32_t)(t % 1000000000LL), cap, (uint32_t)len};
    fwrite(rec, sizeof rec, 1, p->pcap);
    fwrite(data, cap, 1, p->pcap);
}

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts); /* same clock as SO_TIMESTAMPNS */
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* xoshiro256** seeded by splitmix64 (Blackman & Vigna, prng.di.unimi.it). */
static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
static uint64_t next_u64(uint64_t *s) {
    uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t; s[3] = rotl(s[3], 45);
    return r;
}
static double uniform01(uint64_t *s) { return (next_u64(s) >> 11) * 0x1.0p-53; }

static int open_port(const char *name) {
    int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, htons(ETH_P_ALL));
    if (fd < 0) die("socket(AF_PACKET)", errno);
    unsigned idx = if_nametoindex(name);
    if (!idx) die(name, errno);
    struct sockaddr_ll sll = {0};
    sll.sll_family = AF_PACKET;
    sll.sll_protocol = htons(ETH_P_ALL);
    sll.sll_ifindex = (int)idx;
    if (bind(fd, (struct sockaddr *)&sll, sizeof sll) < 0) die("bind", errno);
    int one = 1;
    /* Do not read back what we send on this port (packet(7)). */
    if (setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one) < 0) die("PACKET_IGNORE_OUTGOING", errno);
    /* Kernel receive timestamps, so the delay line starts from the arrival, not from
     * when this process got to run (socket(7) SO_TIMESTAMPNS). */
    if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one) < 0) die("SO_TIMESTAMPNS", errno);
    /* Frames sit in the link's qdisc charged to this socket: a full send buffer would
     * block the whole forwarder, so make it large (root: the FORCE variants ignore
     * the global wmem_max/rmem_max, which we do not touch). */
    int big = 32 << 20;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof big);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big);
    struct packet_mreq mr = {0};
    mr.mr_ifindex = (int)idx;
    mr.mr_type = PACKET_MR_PROMISC;
    if (setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof mr) < 0) die("PACKET_MR_PROMISC", errno);
    port_ifindex[nports] = (int)idx;
    return fd;
}

static void load_config(const char *file) {
    FILE *f = fopen(file, "r");
    if (!f) die(file, errno);
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        char *tok = strtok(line, " \t\n");
        if (!tok || tok[0] == '#') continue;
        if (!strcmp(tok, "seed")) {
            seed = strtoull(strtok(NULL, " \t\n"), NULL, 10);
        } else if (!strcmp(tok, "port")) {
            if (nports >= MAX_PORTS) die("too many ports", E2BIG);
            char *name = strtok(NULL, " \t\n");
            snprintf(port_name[nports], IFNAMSIZ, "%s", name);
            port_fd[nports] = open_port(name);
            nports++;
        } else if (!strcmp(tok, "link")) {
            if (nlinks >= MAX_LINKS) die("too many links", E2BIG);
            struct link *l = &links[nlinks];
            l->a = atoi(strtok(NULL, " \t\n"));
            l->b = atoi(strtok(NULL, " \t\n"));
            for (int d = 0; d < 2; d++) {
                l->d[d].delay_ns = strtoll(strtok(NULL, " \t\n"), NULL, 10);
                l->d[d].loss = strtod(strtok(NULL, " \t\n"), NULL);
                l->d[d].up = 1;
            }
            for (int d = 0; d < 2; d++) {
                /* Rng::stream of rng.rs: four SplitMix64 outputs of the given state. */
                uint64_t x = strtoull(strtok(NULL, " \t\n"), NULL, 10);
                for (int i = 0; i < 4; i++) l->d[d].rng[i] = splitmix64(&x);
                if (!(l->d[d].rng[0] | l->d[d].rng[1] | l->d[d].rng[2] | l->d[d].rng[3])) l->d[d].rng[0] = 1;
            }
            for (int d = 0; d < 2; d++) l->d[d].rate_bps = strtod(strtok(NULL, " \t\n"), NULL);
            for (int d = 0; d < 2; d++) {
                l->d[d].qlimit = strtoull(strtok(NULL, " \t\n"), NULL, 10);
                l->d[d].qlimit_bytes = strtok(NULL, " \t\n")[0] == 'b';
            }
            nlinks++;
        } else if (!strcmp(tok, "pcap")) {
            int pi = atoi(strtok(NULL, " \t\n"));
            if (pi < 0 || pi >= npaths) die("pcap: no such path", EINVAL);
            pcap_open(&paths[pi], strtok(NULL, " \t\n"));
        } else if (!strcmp(tok, "path")) {
            if (npaths >= MAX_PATHS) die("too many paths", E2BIG);
            struct path *p = &paths[npaths];
            struct in_addr ip;
            if (!inet_aton(strtok(NULL, " \t\n"), &ip)) die("path address", EINVAL);
            p->client_ip = ip.s_addr;
            p->client_port = atoi(strtok(NULL, " \t\n"));
            p->server_port = atoi(strtok(NULL, " \t\n"));
            for (int d = 0; d < 2; d++) {
                p->n[d] = atoi(strtok(NULL, " \t\n"));
                if (p->n[d] > MAX_HOPS) die("too many links on a path", E2BIG);
                for (int i = 0; i < p->n[d]; i++) p->hop[d][i] = atoi(strtok(NULL, " \t\n"));
            }
            npaths++;
        } else {
            die(tok, EINVAL);
        }
    }
    fclose(f);
}

static void send_port(int port, const uint8_t *data, size_t len, struct dirline *acct) {
    ssize_t n = send(port_fd[port], data, len, MSG_DONTWAIT);
    if (n >= 0) {
        if (acct) acct->out++;
        return;
    }
    /* ENOBUFS: the qdisc dropped it (its queue is full: DropTail). EAGAIN: our send
     * buffer is full. Both are drops, not failures. */
    if (errno == ENOBUFS || errno == EAGAIN) {
        if (acct) acct->qdrop++;
        return;
    }
    die(port_name[port], errno);
}

/* A frame as the link counts it: its IP length (the Ethernet header is not on the link,
 * as the simulator counts rates and byte limits). */
static uint64_t ip_len(size_t frame_len) { return frame_len - 14; }

/* A frame's time on the serialiser. */
static int64_t tx_time(const struct dirline *dl, size_t len) {
    return dl->rate_bps > 0 ? (int64_t)((double)ip_len(len) * 8e9 / dl->rate_bps) : 0;
}

/* Move `qhead` past the frames that have left the serialiser by `t`. */
static void settle(struct dirline *dl, int64_t t) {
    while (dl->qhead && dl->qhead->depart_ns <= t) {
        dl->qpkts--;
        dl->qbytes -= ip_len(dl->qhead->len);
        dl->qhead = dl->qhead->next;
    }
}

/* A rate or delay change: the frames not yet on the serialiser are timed again, those
 * on it or propagating keep their times (the simulator's `LinkDir::apply`). */
static void retime(struct dirline *dl, int64_t now) {
    settle(dl, now);
    int64_t cursor = now, last_rel = INT64_MIN;
    for (struct pkt *p = dl->head; p; p = p->next) {
        if (p->start_ns <= now) {
            if (p->depart_ns > cursor) cursor = p->depart_ns;
            if (p->release_ns > last_rel) last_rel = p->release_ns;
            continue;
        }
        p->start_ns = cursor;
        p->depart_ns = cursor + tx_time(dl, p->len);
        p->release_ns = p->depart_ns + dl->delay_ns;
        if (p->release_ns < last_rel) p->release_ns = last_rel;
        cursor = p->depart_ns;
        last_rel = p->release_ns;
    }
    if (dl->head) dl->busy_ns = cursor;
}

/* A frame enters link `l` in direction `d` (loss, the DropTail queue and serialiser,
 * then the delay line). */
static void enter_link(int l, int d, uint32_t path, const uint8_t *data, size_t len, int64_t arrival_ns) {
    struct dirline *dl = &links[l].d[d];
    dl->in++;
    if (!dl->up) { dl->down++; return; }
    if (dl->loss > 0 && uniform01(dl->rng) < dl->loss) { dl->lost++; return; }
    if (held_total >= HELD_MAX) { held_overflow++; dl->qdrop++; return; }
    /* DropTail on the frames not yet sent (the simulator's rule: a byte limit always
     * takes a frame into an empty queue). */
    settle(dl, arrival_ns);
    if (dl->qlimit_bytes ? (dl->qpkts > 0 && dl->qbytes + ip_len(len) > dl->qlimit) : dl->qpkts >= dl->qlimit) {
        dl->qdrop++;
        return;
    }
    struct pkt *p = malloc(sizeof *p - FRAME_MAX + len);
    if (!p) die("malloc", ENOMEM);
    p->next = NULL;
    p->len = (uint16_t)len;
    p->path = path;
    memcpy(p->data, data, len);
    /* The serialiser: the frame starts when it arrives or when the one before it is
     * out, and takes len / rate (IP length, as the scenario's rates count). */
    int64_t start = arrival_ns > dl->busy_ns ? arrival_ns : dl->busy_ns;
    p->start_ns = start;
    p->depart_ns = start + tx_time(dl, len);
    dl->busy_ns = p->depart_ns;
    int64_t rel = p->depart_ns + dl->delay_ns;
    if (dl->tail && rel < dl->tail->release_ns) rel = dl->tail->release_ns; /* FIFO */
    p->release_ns = rel;
    if (dl->tail) dl->tail->next = p; else dl->head = p;
    dl->tail = p;
    if (!dl->qhead) dl->qhead = p;
    dl->qpkts++;
    dl->qbytes += ip_len(len);
    dl->held++;
    held_total++;
}

/* Hand a frame of `path` going in direction `d` to hop `i` (a link, or the end host). */
static void to_hop(uint32_t pi, int d, int i, const uint8_t *data, size_t len, int64_t t) {
    struct path *p = &paths[pi];
    if (i < p->n[d]) {
        enter_link(p->hop[d][i], d, pi, data, len, t);
    } else {
        if (d == REV) pcap_write(p, data, len, now_ns());
        send_port(d == FWD ? p->server_port : p->client_port, data, len, NULL);
    }
}

static int path_by_ip(uint32_t ip) {
    for (int i = 0; i < npaths; i++)
        if (paths[i].client_ip == ip) return i;
    return -1;
}

static int hop_index(int pi, int d, int l) {
    for (int i = 0; i < paths[pi].n[d]; i++)
        if (paths[pi].hop[d][i] == l) return i;
    return -1;
}

static void on_frame(int port, const uint8_t *buf, size_t len, int64_t t) {
    if (len < 34 || buf[12] != 0x08 || buf[13] != 0x00) return; /* IPv4 only */
    uint32_t src, dst;
    memcpy(&src, buf + 14 + 12, 4);
    memcpy(&dst, buf + 14 + 16, 4);
    for (int i = 0; i < npaths; i++) {
        if (paths[i].client_port == port && paths[i].client_ip == src) {
            pcap_write(&paths[i], buf, len, t);
            to_hop(i, FWD, 0, buf, len, t);
            return;
        }
    }
    for (int l = 0; l < nlinks; l++) {
        if (links[l].b == port) { /* left link l going forward */
            int pi = path_by_ip(src), h = pi < 0 ? -1 : hop_index(pi, FWD, l);
            if (h >= 0) to_hop(pi, FWD, h + 1, buf, len, t);
            return;
        }
        if (links[l].a == port) { /* left link l going in reverse */
            int pi = path_by_ip(dst), h = pi < 0 ? -1 : hop_index(pi, REV, l);
            if (h >= 0) to_hop(pi, REV, h + 1, buf, len, t);
            return;
        }
    }
    int pi = path_by_ip(dst);
    if (pi >= 0 && paths[pi].server_port == port) to_hop(pi, REV, 0, buf, len, t);
}

static void drain_port(int port) {
    uint8_t buf[FRAME_MAX];
    char ctrl[256];
    for (int k = 0; k < 256; k++) {
        struct iovec iov = {buf, sizeof buf};
        struct sockaddr_ll from;
        struct msghdr mh = {0};
        mh.msg_name = &from;
        mh.msg_namelen = sizeof from;
        mh.msg_iov = &iov;
        mh.msg_iovlen = 1;
        mh.msg_control = ctrl;
        mh.msg_controllen = sizeof ctrl;
        ssize_t n = recvmsg(port_fd[port], &mh, MSG_DONTWAIT | MSG_TRUNC);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) return;
            die(port_name[port], errno);
        }
        if (from.sll_pkttype == PACKET_OUTGOING) continue;
        if ((size_t)n > sizeof buf) continue; /* a super-packet: offloads were left on */
        int64_t t = -1;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
                struct timespec ts;
                memcpy(&ts, CMSG_DATA(c), sizeof ts);
                t = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
            }
        }
        if (t < 0) t = now_ns();
        on_frame(port, buf, (size_t)n, t);
    }
}

static void release_due(int64_t now) {
    for (int l = 0; l < nlinks; l++) {
        for (int d = 0; d < 2; d++) {
            struct dirline *dl = &links[l].d[d];
            while (dl->head && dl->head->release_ns <= now) {
                struct pkt *p = dl->head;
                if (p == dl->qhead) settle(dl, p->depart_ns); /* it has left the serialiser */
                dl->head = p->next;
                if (!dl->head) dl->tail = NULL;
                dl->held--;
                held_total--;
                if (dl->up) send_port(d == FWD ? links[l].a : links[l].b, p->data, p->len, dl);
                else dl->down++;
                free(p);
            }
        }
    }
}

static int64_t next_release(void) {
    int64_t best = INT64_MAX;
    for (int l = 0; l < nlinks; l++)
        for (int d = 0; d < 2; d++)
            if (links[l].d[d].head && links[l].d[d].head->release_ns < best) best = links[l].d[d].head->release_ns;
    return best;
}

static void control_line(char *line) {
    char cmd[16], dir[4];
    int l;
    double v;
    if (!strncmp(line, "stats", 5)) {
        for (int i = 0; i < nlinks; i++)
            for (int d = 0; d < 2; d++) {
                struct dirline *dl = &links[i].d[d];
                settle(dl, now_ns());
                printf("link %d %c %llu %llu %llu %llu %llu %llu %llu %llu\n", i, d ? 'r' : 'f', (unsigned long long)dl->in,
                       (unsigned long long)dl->lost, (unsigned long long)dl->down, (unsigned long long)dl->qdrop,
                       (unsigned long long)dl->out, (unsigned long long)dl->held, (unsigned long long)dl->qpkts,
                       (unsigned long long)dl->qbytes);
            }
        printf("end %llu\n", (unsigned long long)held_overflow);
        fflush(stdout);
        return;
    }
    if (sscanf(line, "%15s %d %3s %lf", cmd, &l, dir, &v) != 4 || l < 0 || l >= nlinks) {
        fprintf(stderr, "forwarder: bad control line: %s", line);
        return;
    }
    struct dirline *dl = &links[l].d[dir[0] == 'r' ? REV : FWD];
    if (!strcmp(cmd, "delay")) { dl->delay_ns = (int64_t)v; retime(dl, now_ns()); }
    else if (!strcmp(cmd, "rate")) { dl->rate_bps = v; retime(dl, now_ns()); }
    else if (!strcmp(cmd, "loss")) dl->loss = v;
    else if (!strcmp(cmd, "state")) {
        dl->up = v != 0;
        if (!dl->up) { /* a link going down loses what it carries */
            while (dl->head) {
                struct pkt *p = dl->head;
                dl->head = p->next;
                dl->down++;
                dl->held--;
                held_total--;
                free(p);
            }
            dl->tail = NULL;
            dl->qhead = NULL;
            dl->qpkts = dl->qbytes = 0;
            dl->busy_ns = now_ns();
        }
    } else fprintf(stderr, "forwarder: unknown control command: %s\n", cmd);
}

static volatile sig_atomic_t stop_requested;
static void on_term(int sig) { (void)sig; stop_requested = 1; }

static int finish(int status) {
    for (int i = 0; i < npaths; i++)
        if (paths[i].pcap) fclose(paths[i].pcap);
    return status;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: forwarder CONFIG\n");
        return 2;
    }
    pid_t parent = getppid();
    /* Die with the parent (prctl(2) PR_SET_PDEATHSIG); if it is already gone, go. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent || parent == 1) return 3;
    /* Nanosecond timer slack (prctl(2) PR_SET_TIMERSLACK): the default 50 us would
     * add up to 50 us to every release. */
    prctl(PR_SET_TIMERSLACK, 1UL);
    /* Real-time priority when allowed, with RLIMIT_RTTIME as a guard: a SCHED_FIFO
     * task that runs 2 s without sleeping gets SIGKILL (setrlimit(2)), so a bug can
     * never hog a core. A busy forwarder sleeps 20 us every 100 ms of work (below), which
     * resets that count and lets the rest of the machine run. */
    struct rlimit rt = {2000000, 2000000};
    if (setrlimit(RLIMIT_RTTIME, &rt) == 0 && !getenv("MPTCPLAB_FORWARDER_NO_RT")) {
        struct sched_param sp = {.sched_priority = 10};
        sched_setscheduler(0, SCHED_FIFO, &sp);
    }
    /* SIGTERM: leave the loop and close the captures (ppoll returns EINTR). */
    struct sigaction sa = {0};
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    load_config(argv[1]);
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("ready %d ports %d links %d paths\n", nports, nlinks, npaths);
    fflush(stdout);

    struct pollfd pfd[MAX_PORTS + 1];
    char ctl[4096];
    size_t ctl_len = 0;
    int64_t awake_since = now_ns();
    for (;;) {
        pfd[0].fd = 0;
        pfd[0].events = POLLIN;
        for (int i = 0; i < nports; i++) {
            pfd[i + 1].fd = port_fd[i];
            pfd[i + 1].events = POLLIN;
        }
        int64_t due = next_release(), now = now_ns();
        struct timespec to, *top = NULL;
        if (due != INT64_MAX) {
            int64_t wait = due > now ? due - now : 0;
            to.tv_sec = wait / 1000000000LL;
            to.tv_nsec = wait % 1000000000LL;
            top = &to;
        }
        int r = ppoll(pfd, (nfds_t)nports + 1, top, NULL);
        if (now - awake_since > 100000000LL) { /* a sure sleep every 100 ms */
            struct timespec nap = {0, 20000};
            nanosleep(&nap, NULL);
            awake_since = now_ns();
        }
        if (stop_requested) return finish(0);
        if (r < 0) {
            if (errno == EINTR) continue;
            die("ppoll", errno);
        }
        if (r > 0) {
            if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
                ssize_t n = read(0, ctl + ctl_len, sizeof ctl - 1 - ctl_len);
                if (n <= 0) return finish(0); /* parent closed the control pipe */
                ctl_len += (size_t)n;
                ctl[ctl_len] = 0;
                char *nl;
                while ((nl = strchr(ctl, '\n'))) {
                    *nl = 0;
                    control_line(ctl);
                    size_t rest = ctl_len - (size_t)(nl + 1 - ctl);
                    memmove(ctl, nl + 1, rest);
                    ctl_len = rest;
                    ctl[ctl_len] = 0;
                }
                if (ctl_len >= sizeof ctl - 1) ctl_len = 0;
            }
            for (int i = 0; i < nports; i++) {
                if (pfd[i + 1].revents & (POLLERR | POLLHUP | POLLNVAL)) die(port_name[i], ENETDOWN);
                if (pfd[i + 1].revents & POLLIN) drain_port(i);
            }
        }
        release_due(now_ns());
        if (getppid() != parent) return 3;
    }
}
