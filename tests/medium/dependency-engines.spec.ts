import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import semver from 'semver';
import { repoRoot } from '../support/compose.js';

interface LockedPackage {
  readonly version?: string;
  readonly engines?: Record<string, string> | readonly string[];
}

const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockedPackage> };

/**
 * `npm ci` warns EBADENGINE for every installed package whose `engines.node` the running Node does not
 * satisfy. The README and the image promise the oldest Node of our own `engines` range, so every locked
 * package must accept that version (pinned or overridden in package.json where a newer one would not).
 */
describe('locked dependencies', () => {
  const oldest = semver.minVersion(manifest.engines.node);

  it('all run on the oldest Node the README promises (npm ci prints no EBADENGINE)', () => {
    expect(oldest?.version).toMatch(/^20\./);
    const refusing = Object.entries(lock.packages)
      .filter(([path]) => path !== '')
      .flatMap(([path, entry]) => {
        const range = entry.engines && !Array.isArray(entry.engines) ? (entry.engines as Record<string, string>).node : undefined;
        return range !== undefined && !semver.satisfies(oldest!.version, range) ? [`${path}@${entry.version}: node ${range}`] : [];
      });
    expect(refusing).toEqual([]);
  });
});
