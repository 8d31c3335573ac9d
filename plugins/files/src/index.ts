export { filesDomain, MANIFEST } from './domain.js';
export { markersOf, parseFilesManifest, type FilesEntry } from './manifest.js';
export { registration } from './register.js';
export { filesInstaller } from './installer.js';
export { filesAdopter } from './adopter.js';
