/**
 * @module
 * An atomic operation that measures itself against Deno KV's limits on one commit - checks,
 * mutations, the total payload and the total size of the keys written - as KV counts them, so a
 * commit too large is refused with a {@link KvLimitError} naming the limit before KV sees it (KV
 * throws a bare `TypeError` after the reads that led to it). A collection's write puts the item,
 * its index entries and its change events in one commit: their sum is what must fit.
 */
import { assertFits, keySize, KvLimitError, MAX_VALUE_BYTES, valueSize } from "./limits.ts";

/**
 * KV's limits on one atomic commit, as Deno 2.9 enforces them (measured: `tests/process/
 * collection_limits_test.ts` holds them against the real store): the payload counts each checked
 * or mutated key once, and each written key again with its value; the key total counts written
 * keys only.
 */
export const COMMIT_LIMITS = {
  checks: 100,
  mutations: 1_000,
  payloadBytes: 819_200,
  writtenKeyBytes: 81_920,
} as const;

export class MeasuredAtomic {
  readonly op: Deno.AtomicOperation;
  #checks = 0;
  #mutations = 0;
  #payload = 0;
  #writtenKeys = 0;

  constructor(kv: Deno.Kv) {
    this.op = kv.atomic();
  }

  check(check: Deno.AtomicCheck): this {
    this.#checks++;
    this.#payload += keySize(check.key);
    this.op.check(check);
    return this;
  }

  /** `bytes`: the value's serialized size, when the caller measured it already. */
  set(key: Deno.KvKey, value: unknown, options?: { expireIn?: number }, bytes?: number): this {
    assertFits(key);
    const size = bytes ?? valueSize(value);
    if (size > MAX_VALUE_BYTES) {
      throw new KvLimitError(
        `KV value too large: ${size} bytes serialized (max ${MAX_VALUE_BYTES})`,
      );
    }
    const k = keySize(key);
    this.#mutations++;
    this.#payload += 2 * k + size;
    this.#writtenKeys += k;
    this.op.set(key, value, options);
    return this;
  }

  delete(key: Deno.KvKey): this {
    this.#mutations++;
    this.#payload += keySize(key);
    this.op.delete(key);
    return this;
  }

  /**
   * `op` for the product's own additions (a write's `also`): what they add is measured as this
   * operation's own, so `assertFits` afterwards sees the whole commit; and every key they check or
   * mutate (a message's `keysIfUndelivered` too) goes through `guard` first, which throws for a key
   * that is not theirs to touch.
   */
  measuring(guard: (key: Deno.KvKey) => void): Deno.AtomicOperation {
    const op = this.op;
    const measured = (key: Deno.KvKey, value: unknown, size = valueSize(value)) => {
      guard(key);
      this.#mutations++;
      this.#payload += 2 * keySize(key) + size;
      this.#writtenKeys += keySize(key);
    };
    const product: Deno.AtomicOperation = Object.assign(Object.create(op), {
      check: (...checks: Deno.AtomicCheck[]) => {
        for (const check of checks) guard(check.key);
        for (const check of checks) this.check(check);
        return product;
      },
      set: (key: Deno.KvKey, value: unknown, options?: { expireIn?: number }) => {
        guard(key);
        this.set(key, value, options);
        return product;
      },
      delete: (key: Deno.KvKey) => {
        guard(key);
        this.delete(key);
        return product;
      },
      sum: (key: Deno.KvKey, n: bigint) => (measured(key, 0, 8), op.sum(key, n), product),
      min: (key: Deno.KvKey, n: bigint) => (measured(key, 0, 8), op.min(key, n), product),
      max: (key: Deno.KvKey, n: bigint) => (measured(key, 0, 8), op.max(key, n), product),
      mutate: (...mutations: Deno.KvMutation[]) => {
        for (const mutation of mutations) guard(mutation.key);
        for (const mutation of mutations) {
          if (mutation.type === "delete") this.delete(mutation.key);
          else if (mutation.type === "set") this.set(mutation.key, mutation.value, mutation);
          else {
            measured(mutation.key, 0, 8);
            op.mutate(mutation);
          }
        }
        return product;
      },
      enqueue: (value: unknown, options?: Parameters<Deno.AtomicOperation["enqueue"]>[1]) => {
        for (const key of options?.keysIfUndelivered ?? []) guard(key);
        const size = valueSize(value);
        if (size > MAX_VALUE_BYTES) {
          throw new KvLimitError(
            `KV queue message too large: ${size} bytes serialized (max ${MAX_VALUE_BYTES})`,
          );
        }
        // KV counts a message as a mutation, its payload and undelivered keys in the total.
        this.#mutations++;
        this.#payload += size +
          (options?.keysIfUndelivered ?? []).reduce((sum, key) => sum + keySize(key), 0);
        op.enqueue(value, options);
        return product;
      },
    });
    return product;
  }

  /**
   * Throws a {@link KvLimitError} naming the first of KV's commit limits this operation is over.
   */
  assertFits(): void {
    const over = (what: string, n: number, max: number, unit = "") =>
      new KvLimitError(`KV commit too large: ${n}${unit} ${what} (max ${max}${unit})`);
    if (this.#checks > COMMIT_LIMITS.checks) {
      throw over("checks", this.#checks, COMMIT_LIMITS.checks);
    }
    if (this.#mutations > COMMIT_LIMITS.mutations) {
      throw over("mutations", this.#mutations, COMMIT_LIMITS.mutations);
    }
    if (this.#payload > COMMIT_LIMITS.payloadBytes) {
      throw over("of keys and values", this.#payload, COMMIT_LIMITS.payloadBytes, " bytes");
    }
    if (this.#writtenKeys > COMMIT_LIMITS.writtenKeyBytes) {
      throw over("of keys written", this.#writtenKeys, COMMIT_LIMITS.writtenKeyBytes, " bytes");
    }
  }
}
