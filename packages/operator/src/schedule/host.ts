/** The operator seat as a {@link ScheduleHost}: the real platform, home and process runner. */
import { homedir } from 'node:os';
import { FleetError, type Platform } from '@fleet/core';
import { ExecaProcessRunner } from '@fleet/controller';
import type { ScheduleHost } from './io.js';

export function operatorScheduleHost(): ScheduleHost {
  const platform = process.platform;
  if (platform !== 'linux' && platform !== 'darwin' && platform !== 'win32') {
    throw new FleetError('USAGE', `fleet schedule does not support the platform ${platform}`);
  }
  const home = homedir();
  const xdg = process.env['XDG_CONFIG_HOME'];
  return {
    platform: platform satisfies Platform,
    home,
    ...(xdg ? { xdgConfigHome: xdg } : {}),
    runner: new ExecaProcessRunner(home),
    ...(typeof process.getuid === 'function' ? { uid: process.getuid() } : {}),
    now: () => new Date(),
  };
}
