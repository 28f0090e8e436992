/** Lua strings are bytes; the model keeps them as binary strings (one JS char per byte, latin1). */
import type { LuaString } from 'fengari';

export const fromLua = (s: LuaString): string => Buffer.from(s.buffer, s.byteOffset, s.byteLength).toString('latin1');
export const toLua = (s: string): LuaString => new Uint8Array(Buffer.from(s, 'latin1'));
/** What ioredis sends for a JS string: its UTF-8 bytes. */
export const utf8ToBinary = (s: string): string => Buffer.from(s, 'utf8').toString('latin1');
/** What ioredis makes of a bulk reply: the bytes read as UTF-8. */
export const binaryToUtf8 = (s: string): string => Buffer.from(s, 'latin1').toString('utf8');
