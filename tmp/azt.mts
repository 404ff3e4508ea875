import { startAzurite } from "../scripts/azurite-process.js";
const a = await startAzurite();
console.log(a.connectionString);
await a.stop();
console.log("stopped");
