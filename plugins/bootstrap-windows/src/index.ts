export { registration } from './register.js';
export { createWindowsTaskAdapter, parseList, type WindowsTaskAdapterOptions } from './adapter.js';
export { windowsControllerSupervisor } from './controller-supervisor.js';
export { createTaskProber, prober, type TaskFacts } from './prober.js';
export {
  quoteWindowsArgument,
  readTask,
  splitWindowsArguments,
  TASK_DEFINITION_PATH,
  TASK_NAME,
  TASK_NAMESPACE,
  taskXml,
  xmlEscape,
  type TaskOptions,
} from './task-xml.js';
