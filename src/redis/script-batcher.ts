/**
 * Batches a RedisStore's checks: those of one limiter made in one event-loop turn go to Redis together
 * (lua/admit-many.lua, or lua/admit-defer-many.lua for checks that may be deferred; the RedisQueue batches its
 * workers' acknowledgements the same way, lua/complete-claim-many.lua). The script decides them
 * one after the other at the same instant, exactly as that many single calls at that instant would, and reads
 * and writes the limiter state once: under load this cuts the Redis CPU per check to about a quarter and the
 * client's commands (and socket writes) by the batch size. A lone check waits only for the current turn to
 * end (setImmediate). Checks with different injected times (tests) never share a batch, and batches leave in
 * arrival order on one connection, so Redis sees the checks in that order. With `laneOf` (a limiter with
 * plans: each plan's rules are a config block of their own), a turn's checks go in one call per lane, the
 * lanes in the order of their first check, all at once.
 */

/** One request in one script call. `now` is the injected time the script gets (0 = Redis TIME). */
export type RunOne<Req, Reply> = (now: number, request: Req) => Promise<Reply>;
/** Several requests in one script call: one reply per request, in order. */
export type RunMany<Req, Reply> = (now: number, requests: readonly Req[]) => Promise<Reply[]>;

interface Waiting<Req, Reply> {
  readonly request: Req;
  readonly resolve: (reply: Reply) => void;
  readonly reject: (error: unknown) => void;
}

export class ScriptBatcher<Req, Reply> {
  private batch: Array<Waiting<Req, Reply>> = [];
  private batchNow = 0;
  private scheduled = false;

  /**
   * @param maxBatch requests per script call at most; 1 sends every request on its own
   * @param laneOf requests of different lanes never share a call (`one` and `many` get one lane's requests)
   */
  constructor(
    private readonly one: RunOne<Req, Reply>,
    private readonly many: RunMany<Req, Reply>,
    private readonly maxBatch: number,
    private readonly laneOf?: (request: Req) => number,
  ) {}

  submit(now: number, request: Req): Promise<Reply> {
    if (this.maxBatch === 1) return this.one(now, request);
    if (this.batch.length > 0 && now !== this.batchNow) this.flush();
    return new Promise<Reply>((resolve, reject) => {
      if (this.batch.length === 0) this.batchNow = now;
      this.batch.push({ request, resolve, reject });
      if (this.batch.length >= this.maxBatch) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.onTurnEnd);
      }
    });
  }

  private readonly onTurnEnd = (): void => {
    this.scheduled = false;
    this.flush();
  };

  private flush(): void {
    const batch = this.batch;
    if (batch.length === 0) return;
    this.batch = [];
    const now = this.batchNow;
    if (this.laneOf === undefined || batch.length === 1) this.send(now, batch);
    else for (const lane of lanes(batch, this.laneOf)) this.send(now, lane);
  }

  private send(now: number, batch: Array<Waiting<Req, Reply>>): void {
    if (batch.length === 1) {
      const only = batch[0]!;
      this.one(now, only.request).then(only.resolve, only.reject);
      return;
    }
    this.many(
      now,
      batch.map((w) => w.request),
    ).then(
      (replies) => {
        for (let i = 0; i < batch.length; i++) batch[i]!.resolve(replies[i]!);
      },
      (error: unknown) => {
        for (const waiting of batch) waiting.reject(error);
      },
    );
  }
}

/** A batch split by lane, in the order of each lane's first request (one lane: the batch itself). */
function lanes<Req, Reply>(batch: Array<Waiting<Req, Reply>>, laneOf: (request: Req) => number): Array<Array<Waiting<Req, Reply>>> {
  const first = laneOf(batch[0]!.request);
  if (batch.every((w) => laneOf(w.request) === first)) return [batch];
  const byLane = new Map<number, Array<Waiting<Req, Reply>>>();
  for (const w of batch) {
    const lane = laneOf(w.request);
    const list = byLane.get(lane);
    if (list) list.push(w);
    else byLane.set(lane, [w]);
  }
  return [...byLane.values()];
}
