// The Connect protocol (JSON) over fetch, for the hortus.v1.Advisor service of the web port.
//
// Why not @connectrpc/connect-web: the page needs six unary calls and one server stream, and
// Connect's JSON wire format is the protobuf JSON mapping the README documents. A hundred
// lines here keep the shipped bundle small and free of runtime dependencies; the generated
// TypeScript client (clients/typescript) is there for applications that want types.

const SERVICE = "/hortus.v1.Advisor/";

export class HortusError extends Error {
  code: string;
  field: string;
  constructor(code: string, message: string, field = "") {
    super(message);
    this.code = code;
    this.field = field;
  }
  /** What a person reads: the message, and the request field it is about. */
  readable(): string {
    const where = this.field ? ` (field: ${this.field})` : "";
    return `${this.message}${where}`;
  }
}

// --- a minimal protobuf reader for google.rpc.BadRequest, the only detail the page shows ---
function readVarint(bytes: Uint8Array, pos: number): [number, number] {
  let value = 0;
  let shift = 0;
  for (;;) {
    const b = bytes[pos++];
    value += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) return [value, pos];
    shift += 7;
  }
}

function fields(bytes: Uint8Array): Array<[number, Uint8Array]> {
  const out: Array<[number, Uint8Array]> = [];
  let pos = 0;
  while (pos < bytes.length) {
    const [key, p] = readVarint(bytes, pos);
    pos = p;
    const wire = key & 7;
    if (wire === 2) {
      const [len, q] = readVarint(bytes, pos);
      out.push([key >>> 3, bytes.subarray(q, q + len)]);
      pos = q + len;
    } else if (wire === 0) {
      pos = readVarint(bytes, pos)[1];
    } else if (wire === 5) {
      pos += 4;
    } else if (wire === 1) {
      pos += 8;
    } else {
      break;
    }
  }
  return out;
}

function base64ToBytes(text: string): Uint8Array {
  const padded = text.replace(/-/g, "+").replace(/_/g, "/");
  const raw = atob(padded + "=".repeat((4 - (padded.length % 4)) % 4));
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

/** The first field violation of a BadRequest detail: [field, description]. */
function badRequestField(details: unknown): [string, string] | null {
  if (!Array.isArray(details)) return null;
  for (const d of details) {
    if (!d || typeof d !== "object") continue;
    const detail = d as { type?: string; value?: string };
    if (detail.type !== "google.rpc.BadRequest" || !detail.value) continue;
    const decoder = new TextDecoder();
    for (const [num, violation] of fields(base64ToBytes(detail.value))) {
      if (num !== 1) continue;
      let field = "";
      let description = "";
      for (const [n, v] of fields(violation)) {
        if (n === 1) field = decoder.decode(v);
        if (n === 2) description = decoder.decode(v);
      }
      return [field, description];
    }
  }
  return null;
}

function errorFrom(body: unknown, status: number): HortusError {
  const e = (body && typeof body === "object" ? body : {}) as { code?: string; message?: string; details?: unknown };
  const violation = badRequestField(e.details);
  const message = violation && violation[1] ? violation[1] : e.message || `HTTP ${status}`;
  return new HortusError(e.code || "unknown", message, violation ? violation[0] : "");
}

export async function call<T>(method: string, request: object, signal?: AbortSignal): Promise<T> {
  let response: Response;
  try {
    response = await fetch(SERVICE + method, {
      method: "POST",
      headers: { "Content-Type": "application/json", "Connect-Protocol-Version": "1" },
      body: JSON.stringify(request),
      signal,
    });
  } catch (e) {
    if ((e as Error).name === "AbortError") throw e;
    throw new HortusError("unavailable", "the hortus server cannot be reached");
  }
  const text = await response.text();
  let body: unknown = {};
  try {
    body = text ? JSON.parse(text) : {};
  } catch {
    throw new HortusError("internal", `unexpected answer (HTTP ${response.status})`);
  }
  if (!response.ok) throw errorFrom(body, response.status);
  return body as T;
}

/** A server-streaming call (Connect enveloped JSON); resolves when the stream ends. Abort
 * `signal` to cancel: the server stops the search. */
export async function stream<T>(method: string, request: object, onMessage: (m: T) => void, signal: AbortSignal): Promise<void> {
  const json = new TextEncoder().encode(JSON.stringify(request));
  const envelope = new Uint8Array(5 + json.length);
  new DataView(envelope.buffer).setUint32(1, json.length);
  envelope.set(json, 5);
  let response: Response;
  try {
    response = await fetch(SERVICE + method, {
      method: "POST",
      headers: { "Content-Type": "application/connect+json", "Connect-Protocol-Version": "1" },
      body: envelope,
      signal,
    });
  } catch (e) {
    if ((e as Error).name === "AbortError") return;
    throw new HortusError("unavailable", "the hortus server cannot be reached");
  }
  if (!response.ok || !response.body) {
    const text = await response.text();
    let body: unknown = {};
    try {
      body = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    throw errorFrom(body, response.status);
  }
  const reader = response.body.getReader();
  let buffer = new Uint8Array(0);
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const joined = new Uint8Array(buffer.length + value.length);
      joined.set(buffer);
      joined.set(value, buffer.length);
      buffer = joined;
      while (buffer.length >= 5) {
        const flags = buffer[0];
        const length = new DataView(buffer.buffer, buffer.byteOffset).getUint32(1);
        if (buffer.length < 5 + length) break;
        const payload = JSON.parse(decoder.decode(buffer.subarray(5, 5 + length)));
        buffer = buffer.slice(5 + length);
        if (flags & 2) {
          if (payload.error) throw errorFrom(payload.error, 200);
          return;
        }
        onMessage(payload as T);
      }
    }
  } catch (e) {
    if ((e as Error).name === "AbortError") return;
    throw e;
  }
}

// --- the messages the page uses (protobuf JSON mapping: zero values may be absent) ---
export interface Position {
  game: string;
  encoded?: string; // base64
  structured?: object;
}
export interface Action {
  id?: number;
  notation?: string;
}
export interface ChanceOutcome {
  action?: Action;
  probability?: number;
  hidden?: boolean;
}
export interface PositionInfo {
  position: Position;
  currentPlayer?: number;
  terminal?: boolean;
  scores?: number[];
  returns?: number[];
}
export interface LegalActions {
  currentPlayer?: number;
  actions?: Action[];
  chanceOutcomes?: ChanceOutcome[];
  terminal?: boolean;
  picture?: string;
}
export interface MoveAnalysis {
  action?: Action;
  visits?: string | number;
  winProbability?: number;
  expectedScores?: number[];
  principalVariation?: Action[];
  reason?: string;
}
export interface Analysis {
  seat?: number;
  moves?: MoveAnalysis[];
  iterations?: string | number;
  partial?: boolean;
  elapsedMs?: number;
}
export interface GameInfo {
  name: string;
  minPlayers?: number;
  maxPlayers?: number;
}

export function hexToBase64(hex: string): string {
  const clean = hex.replace(/\s+/g, "");
  if (!/^([0-9a-fA-F]{2})*$/.test(clean)) throw new HortusError("invalid_argument", "not a hex string", "position");
  let raw = "";
  for (let i = 0; i < clean.length; i += 2) raw += String.fromCharCode(parseInt(clean.slice(i, i + 2), 16));
  return btoa(raw);
}

export function base64ToHex(b64: string): string {
  return Array.from(base64ToBytes(b64), (b) => b.toString(16).padStart(2, "0")).join("");
}
