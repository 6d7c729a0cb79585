// Open-loop HTTP/1.1 load generator (wrk2-style), driven by bench/lib/openLoop.ts.
//
// Request i is due at start + i / rate, whether or not earlier ones were answered. A due
// request leaves on an idle keep-alive connection, or waits in a FIFO when every connection
// is busy; its latency counts from the *scheduled* time, so a server stall shows in the
// percentiles instead of slowing the generator down (no coordinated omission).
//
// One thread, epoll, non-blocking sockets, one request in flight per connection. It never
// spins, so it leaves the CPU to the server. Two ways of waiting:
//  - event-driven (TICK_US 0): it sleeps in epoll_pwait2 until the next due time
//    (nanosecond timeout, timer slack 1 ns) or an answer, so a request leaves within the
//    kernel's wake-up latency of its schedule and an answer is timed when it arrives;
//  - ticked (TICK_US > 0, while requests remain to be sent): it sleeps until the next tick
//    (every TICK_US from the start), then reads every answer that arrived and sends every
//    request due. A request then leaves up to one tick after it is due and its answer is
//    timed up to one tick after it arrived; both count in its latency, so ticks can only
//    make latency read higher. At high rates this saves most of the generator's CPU: on a
//    VM a sleep and a wake-up per request cost more than the request's own system calls,
//    and that CPU is taken from the server when they share the machine.
//
// A warm-up (WARMUP_S, 0 by default) runs the same schedule for that long before the measured
// DURATION_S, on the same connections: its requests are sent and answered but not counted
// (as wrk2's calibration period), so the first moments of a run (new connections, the driver
// process's own garbage collection after drawing the requests) are not measured as the
// server's latency. Errors and non-2xx answers count in both.
//
// usage: openloop PORT RATE DURATION_S CONNECTIONS REQUESTS_FILE SAMPLES_FILE [TICK_US [WARMUP_S]]
//   REQUESTS_FILE: u32le count, then count × (u32le length, raw HTTP/1.1 request bytes);
//                  request i is entry i mod count.
//   SAMPLES_FILE (written): u32le n_latency, n_service, n_lag, then the three arrays of u32le
//                  microseconds: latency from the scheduled time (one per answered measured
//                  request, plus the age of every one still unanswered at the end), from the actual
//                  send (service), and send − scheduled for requests sent on an idle connection
//                  (the generator's own lateness).
//   stdout: one JSON object of the measured part's counters, duration and the CPU seconds the
//           generator used in it; stderr: "tick <completed, warm-up included> <elapsed s>" every 250 ms.
//   Exit 2 on bad usage or setup failure (message on stderr).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define READ_BUF 65536
#define GRACE_NS 5000000000LL // wait this long after the schedule ends for answers

typedef struct {
  int fd;
  int busy;           // a request is in flight (or partly written)
  int dead;           // closed or failed; never used again
  int64_t scheduled, sent;
  const uint8_t *out; // unwritten rest of the request
  uint32_t out_len;
  int want_out;       // EPOLLOUT is armed
  char *in;
  uint32_t in_len;
} conn_t;

typedef struct {
  uint32_t *v;
  size_t n, cap;
} samples_t;

static void die(const char *what) {
  fprintf(stderr, "openloop: %s: %s\n", what, strerror(errno));
  exit(2);
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

// CPU seconds this process has used.
static double cpu_seconds(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void record(samples_t *s, int64_t ns) {
  if (s->n == s->cap) {
    s->cap = s->cap ? s->cap * 2 : 65536;
    s->v = realloc(s->v, s->cap * sizeof(uint32_t));
    if (!s->v) die("realloc");
  }
  int64_t us = (ns + 500) / 1000;
  s->v[s->n++] = (uint32_t)(us < 1 ? 1 : us > UINT32_MAX ? UINT32_MAX : us);
}

// True when the header block [buf, end) has the header `name` (lower case, with ':')
// starting a line; *value then points after the colon.
static int header(const char *buf, const char *end, const char *name, const char **value) {
  size_t n = strlen(name);
  for (const char *p = buf; p + n <= end; p++) {
    if ((p == buf || p[-1] == '\n') && strncasecmp(p, name, n) == 0) {
      *value = p + n;
      return 1;
    }
  }
  return 0;
}

// Length of the complete response at the start of buf, 0 when more bytes are needed. The
// body is delimited by Content-Length or chunked transfer coding (trailers allowed).
static uint32_t response_length(const char *buf, uint32_t len) {
  const char *end = memmem(buf, len, "\r\n\r\n", 4);
  if (!end) return 0;
  const char *value;
  uint32_t head = (uint32_t)(end - buf) + 4;
  if (header(buf, end, "transfer-encoding:", &value) && memmem(value, (size_t)(end - value), "chunked", 7)) {
    uint32_t at = head;
    for (;;) { // each chunk: hex size, CRLF, data, CRLF; size 0 ends, then trailers and CRLF
      const char *line_end = memmem(buf + at, len - at, "\r\n", 2);
      if (!line_end) return 0;
      unsigned long size = strtoul(buf + at, NULL, 16);
      at = (uint32_t)(line_end - buf) + 2;
      if (size == 0) {
        if (len - at >= 2 && buf[at] == '\r' && buf[at + 1] == '\n') return at + 2;
        const char *trailers_end = memmem(buf + at, len - at, "\r\n\r\n", 4);
        return trailers_end ? (uint32_t)(trailers_end - buf) + 4 : 0;
      }
      if (len - at < size + 2) return 0;
      at += (uint32_t)size + 2;
    }
  }
  uint32_t body = header(buf, end, "content-length:", &value) ? (uint32_t)strtoul(value, NULL, 10) : 0;
  return len >= head + body ? head + body : 0;
}

static const uint8_t **reqs;
static uint32_t *req_lens, req_count;

static void load_requests(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) die(path);
  if (fread(&req_count, 4, 1, f) != 1 || req_count == 0) die("requests file: no count");
  reqs = calloc(req_count, sizeof *reqs);
  req_lens = calloc(req_count, sizeof *req_lens);
  for (uint32_t i = 0; i < req_count; i++) {
    uint32_t len;
    if (fread(&len, 4, 1, f) != 1) die("requests file: truncated");
    uint8_t *b = malloc(len);
    if (!b || fread(b, 1, len, f) != len) die("requests file: truncated");
    reqs[i] = b;
    req_lens[i] = len;
  }
  fclose(f);
}

// The run's state (one thread).
static int ep;
static conn_t *conns;
static int *idle, n_idle;
static int64_t measure_start, window_end;
// sent/completed_all/errors count every request; the others only the measured ones.
static uint64_t sent, sent_measured, sent_in_window, completed, completed_all, non2xx, errors, measured_errors;
static samples_t lat, svc, lag;

// A request scheduled at `scheduled` is measured (past the warm-up).
static int measured(int64_t scheduled) {
  return scheduled >= measure_start;
}

static void kill_conn(conn_t *c) {
  if (c->busy) { // its request will never be answered
    errors++;
    if (measured(c->scheduled)) measured_errors++;
  }
  c->dead = 1;
  close(c->fd);
}

// Writes c's unwritten request bytes; on a partial write waits for EPOLLOUT.
static void flush_conn(int i) {
  conn_t *c = &conns[i];
  ssize_t w = write(c->fd, c->out, c->out_len);
  if (w < 0 && errno != EAGAIN && errno != EINTR) return kill_conn(c);
  if (w > 0) {
    c->out += w;
    c->out_len -= (uint32_t)w;
  }
  int want = c->out_len > 0;
  if (want == c->want_out) return;
  c->want_out = want;
  struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | (want ? EPOLLOUT : 0), .data.u64 = (uint64_t)i};
  epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
}

static void send_on(int i, int64_t scheduled, int64_t now) {
  conn_t *c = &conns[i];
  uint32_t r = (uint32_t)(sent % req_count);
  c->busy = 1;
  c->scheduled = scheduled;
  if (measured(scheduled)) sent_measured++;
  c->sent = now;
  c->out = reqs[r];
  c->out_len = req_lens[r];
  sent++;
  if (now >= measure_start && now <= window_end) sent_in_window++;
  flush_conn(i);
}

// When request n of a run that started at `start` is due.
static int64_t due_at(int64_t start, double interval_ns, uint64_t n) {
  return start + (int64_t)((double)n * interval_ns);
}

// An idle live connection, or -1.
static int take_idle(void) {
  while (n_idle > 0) {
    int i = idle[--n_idle];
    if (!conns[i].dead) return i;
  }
  return -1;
}

int main(int argc, char **argv) {
  if (argc < 7 || argc > 9) {
    fprintf(stderr, "usage: openloop PORT RATE DURATION_S CONNECTIONS REQUESTS_FILE SAMPLES_FILE [TICK_US [WARMUP_S]]\n");
    return 2;
  }
  int port = atoi(argv[1]);
  double rate = atof(argv[2]), duration_s = atof(argv[3]);
  int nconn = atoi(argv[4]);
  double tick_us = argc >= 8 ? atof(argv[7]) : 0;
  double warmup_s = argc == 9 ? atof(argv[8]) : 0;
  if (port <= 0 || port > 65535 || rate <= 0 || duration_s <= 0 || nconn <= 0 || !(tick_us >= 0 && tick_us <= 1e6) || !(warmup_s >= 0 && warmup_s <= 3600)) {
    fprintf(stderr, "openloop: PORT, RATE, DURATION_S and CONNECTIONS must be positive, TICK_US from 0 to 1000000, WARMUP_S from 0 to 3600\n");
    return 2;
  }
  const int64_t tick_ns = (int64_t)(tick_us * 1000);
  load_requests(argv[5]);
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

  ep = epoll_create1(0);
  if (ep < 0) die("epoll_create1");

  conns = calloc((size_t)nconn, sizeof *conns);
  idle = malloc(sizeof(int) * (size_t)nconn);
  if (!conns || !idle) die("malloc");
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (int i = 0; i < nconn; i++) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) die("socket");
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) die("connect");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    conns[i].fd = fd;
    conns[i].in = malloc(READ_BUF);
    if (!conns[i].in) die("malloc");
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.u64 = (uint64_t)i};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) die("epoll_ctl");
    idle[n_idle++] = i;
  }

  // Requests 0 .. warm-1 are the warm-up, warm .. total-1 the measured ones.
  const uint64_t warm = (uint64_t)(rate * warmup_s + 0.5);
  uint64_t measured_total = (uint64_t)(rate * duration_s + 0.5);
  if (measured_total < 1) measured_total = 1;
  const uint64_t total = warm + measured_total;
  const double interval_ns = 1e9 / rate;
  int64_t *queue = malloc(sizeof(int64_t) * total); // scheduled times waiting for a connection
  if (!queue) die("malloc queue");
  uint64_t q_head = 0, q_tail = 0, scheduled_count = 0;

  const int64_t start = now_ns();
  measure_start = due_at(start, interval_ns, warm);
  window_end = measure_start + (int64_t)(duration_s * 1e9);
  const int64_t deadline = window_end + GRACE_NS;
  int64_t next_tick = start + 250000000LL;
  struct epoll_event events[256];
  int full = 0; // the last epoll call filled `events`: more may be waiting
  double cpu_at_measure = warm == 0 ? cpu_seconds() : -1;
  for (;;) {
    int64_t now = now_ns();
    if (cpu_at_measure < 0 && now >= measure_start) cpu_at_measure = cpu_seconds();
    // Everything due by now: on an idle connection, else into the queue.
    uint64_t due = (uint64_t)((double)(now - start) / interval_ns) + 1;
    if (due > total) due = total;
    while (scheduled_count < due) {
      int64_t sched = due_at(start, interval_ns, scheduled_count);
      scheduled_count++;
      int i = take_idle();
      if (i >= 0) {
        if (measured(sched)) record(&lag, now - sched);
        send_on(i, sched, now);
      } else {
        queue[q_tail++] = sched;
      }
    }
    if (scheduled_count >= total && completed_all + errors >= total) break;
    if (now >= deadline) break;
    if (now >= next_tick) {
      fprintf(stderr, "tick %llu %.3f\n", (unsigned long long)completed_all, (double)(now - start) / 1e9);
      next_tick += 250000000LL;
    }

    int64_t wake = next_tick < deadline ? next_tick : deadline;
    const int ticked = tick_ns > 0 && scheduled_count < total;
    if (ticked) {
      // The next tick: requests due before it wait for it.
      int64_t tick = start + ((now - start) / tick_ns + 1) * tick_ns;
      if (tick < wake) wake = tick;
    } else if (scheduled_count < total) {
      int64_t next_due = due_at(start, interval_ns, scheduled_count);
      if (next_due < wake) wake = next_due;
    }
    if (full) wake = now; // answers may still be waiting
    int n;
    if (ticked) {
      // Sleep without waking for answers, then take every event without waiting.
      if (wake > now) {
        struct timespec at = {.tv_sec = wake / 1000000000LL, .tv_nsec = wake % 1000000000LL};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);
      }
      n = epoll_wait(ep, events, 256, 0);
      if (n < 0 && errno != EINTR) die("epoll_wait");
    } else {
      int64_t sleep_ns = wake > now ? wake - now : 0;
      struct timespec timeout = {.tv_sec = sleep_ns / 1000000000LL, .tv_nsec = sleep_ns % 1000000000LL};
      n = epoll_pwait2(ep, events, 256, &timeout, NULL);
      if (n < 0 && errno != EINTR) die("epoll_pwait2");
    }
    full = n == 256;
    for (int k = 0; k < n; k++) {
      int i = (int)events[k].data.u64;
      conn_t *c = &conns[i];
      if (!c->dead && (events[k].events & EPOLLOUT) && c->out_len) flush_conn(i);
      if (c->dead || !(events[k].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))) continue;
      ssize_t r = read(c->fd, c->in + c->in_len, READ_BUF - c->in_len);
      if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (r <= 0) {
        kill_conn(c);
        continue;
      }
      c->in_len += (uint32_t)r;
      uint32_t len = response_length(c->in, c->in_len);
      if (len == 0) {
        if (c->in_len == READ_BUF) kill_conn(c); // no response fits: give up on the connection
        continue;
      }
      int64_t t = now_ns();
      if (!c->busy || len < 10 || c->in[9] != '2') non2xx++; // "HTTP/1.1 2xx"
      memmove(c->in, c->in + len, c->in_len - len);
      c->in_len -= len;
      if (!c->busy) continue; // an answer nobody asked for
      c->busy = 0;
      completed_all++;
      if (measured(c->scheduled)) {
        completed++;
        record(&lat, t - c->scheduled);
        record(&svc, t - c->sent);
      }
      if (q_head < q_tail) send_on(i, queue[q_head++], t);
      else idle[n_idle++] = i;
    }
  }

  const int64_t end = now_ns();
  // Unanswered requests count with their age, so a stall is not hidden.
  for (int i = 0; i < nconn; i++)
    if (!conns[i].dead && conns[i].busy && measured(conns[i].scheduled)) record(&lat, end - conns[i].scheduled);
  // Measured requests neither answered nor lost with their connection.
  uint64_t timeouts = measured_total - completed - measured_errors;

  FILE *out = fopen(argv[6], "wb");
  if (!out) die(argv[6]);
  uint32_t counts[3] = {(uint32_t)lat.n, (uint32_t)svc.n, (uint32_t)lag.n};
  int written = fwrite(counts, 4, 3, out) == 3 && fwrite(lat.v, 4, lat.n, out) == lat.n &&
                fwrite(svc.v, 4, svc.n, out) == svc.n && fwrite(lag.v, 4, lag.n, out) == lag.n;
  if (fclose(out) != 0 || !written) die(argv[6]);
  // The measured part's CPU (all of it when the run ended inside the warm-up).
  double cpu_s = cpu_seconds() - (cpu_at_measure < 0 ? 0 : cpu_at_measure);
  printf("{\"total\":%llu,\"sent\":%llu,\"sentInWindow\":%llu,\"completed\":%llu,\"non2xx\":%llu,"
         "\"errors\":%llu,\"timeouts\":%llu,\"elapsedS\":%.6f,\"cpuS\":%.6f}\n",
         (unsigned long long)measured_total, (unsigned long long)sent_measured, (unsigned long long)sent_in_window,
         (unsigned long long)completed, (unsigned long long)non2xx, (unsigned long long)errors,
         (unsigned long long)timeouts, (double)(end - measure_start) / 1e9, cpu_s);
  return 0;
}
