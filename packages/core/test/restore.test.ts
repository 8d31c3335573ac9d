import { expect } from 'chai';
import { FleetError } from '../src/errors.js';
import type { ReplaceResult, SafeFileWriter } from '../src/interfaces/installer.js';
import { restoreWritten } from '../src/installers/restore.js';

const written = (path: string): ReplaceResult => ({
  path,
  beforeSha256: null,
  afterSha256: 'a'.repeat(64),
  backupPath: null,
  unchanged: false,
});

/** A writer that records restores and fails the ones named. */
function recordingWriter(failing: readonly string[]): {
  writer: SafeFileWriter;
  restored: string[];
} {
  const restored: string[] = [];
  const writer: SafeFileWriter = {
    read: () => Promise.resolve(null),
    replace: () => Promise.reject(new Error('not used here')),
    restore: (result) => {
      restored.push(result.path);
      return failing.includes(result.path) ? Promise.reject(new Error('EIO')) : Promise.resolve();
    },
  };
  return { writer, restored };
}

describe('restoreWritten', () => {
  it('restores every written file, newest first, and returns when all were put back', async () => {
    const { writer, restored } = recordingWriter([]);
    await restoreWritten(writer, [written('~/a'), written('~/b')], new Error('x'));
    expect(restored).to.deep.equal(['~/b', '~/a']);
  });

  it('goes on past a failed restore and then says recovery is required, keeping the cause', async () => {
    const { writer, restored } = recordingWriter(['~/b']);
    const cause = new FleetError('ACTION_FAILED', 'reload failed');
    try {
      await restoreWritten(writer, [written('~/a'), written('~/b')], cause);
      expect.fail('expected RECOVERY_REQUIRED');
    } catch (error) {
      expect(restored).to.deep.equal(['~/b', '~/a']);
      expect((error as FleetError).code).to.equal('RECOVERY_REQUIRED');
      expect((error as FleetError).message).to.equal(
        'ACTION_FAILED: reload failed; and ~/b could not be restored from backup',
      );
      expect((error as Error).cause).to.equal(cause);
    }
  });
});
