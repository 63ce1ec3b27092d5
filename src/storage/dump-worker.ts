import { parentPort, workerData } from 'node:worker_threads'
import { dumpImage } from './embedded-backup.js'

// The worker thread of a backup of the embedded database (embedded-backup.ts): the data directory's image in, its
// plain SQL (or the error) out. An entry of its own in the bundle (build.mjs).
try {
  parentPort!.postMessage({ text: await dumpImage(new Blob([workerData as ArrayBuffer])) })
} catch (e) {
  parentPort!.postMessage({ error: String((e as Error).message) })
}
