/**
 * Counts system calls of a running process with strace (attached to all its threads), for a bench
 * that must say how many durable writes an operation costs. Attaching slows every system call of
 * the process: count in a run of its own, never in one that is timed.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function straceAvailable(): boolean {
  return spawnSync('strace', ['-V']).status === 0;
}

/** The lines strace printed for `syscalls` (with file paths for descriptors, -y) while `run` ran. */
export async function traceSyscalls(pid: number, syscalls: readonly string[], run: () => Promise<void>): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'engram-strace-'));
  const out = join(dir, 'trace.txt');
  const tracer = spawn('strace', ['-f', '-y', '-qq', '-s', '0', '-e', `trace=${syscalls.join(',')}`, '-o', out, '-p', String(pid)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => tracer.once('exit', () => resolve()));
  try {
    // strace prints nothing on attach with -qq: wait until the process's threads are attached.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    if (tracer.exitCode !== null) throw new Error(`strace exited with ${tracer.exitCode}`);
    await run();
  } finally {
    tracer.kill('SIGINT');
    await exited;
  }
  const lines = readFileSync(out, 'utf8').split('\n');
  rmSync(dir, { recursive: true, force: true });
  return lines;
}
