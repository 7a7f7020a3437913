/** People's access keys on the file backend (see access-keys-cases.ts). */
import { accessKeysSuite } from './access-keys-cases.js';

accessKeysSuite('file');
