import { ConfigError } from '../../src/errors';

/** The option names an entry point knows, from the message of its unknown-option error. */
export function knownOptions(call: () => unknown): string[] {
  try {
    call();
  } catch (error) {
    if (error instanceof ConfigError && error.code === 'ERR_BL_UNKNOWN_OPTION') return error.message.split('Known options: ')[1]!.split(', ');
    throw error;
  }
  throw new Error('no unknown-option error');
}
