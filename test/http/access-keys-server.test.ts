/** People's access keys on the server backend (see access-keys-cases.ts). */
import { accessKeysSuite } from './access-keys-cases.js';

accessKeysSuite('server');
