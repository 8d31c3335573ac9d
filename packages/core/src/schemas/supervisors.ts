// The supervisors fleet knows (contract §12): what fleet.yaml's `hosts.<host>.supervisor` names
// and what a node policy's `bootstrap.supervisors` may allow. Both the repository model and the
// node policy read the list, so it sits at the bottom of core's folders (docs/architecture.md,
// "Core's folders"). A line comment, not a doc comment: the list's API entry stays as it was.
export const SUPERVISORS = ['systemd-user', 'windows-task', 'launchd', 'lab', 'none'] as const;
