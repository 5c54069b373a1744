/** Where the ops CLI writes: the process's streams, or a test's buffers. */
export interface OpsIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

export const OPS_IO = Symbol('OPS_IO');

export const PROCESS_IO: OpsIo = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
};
