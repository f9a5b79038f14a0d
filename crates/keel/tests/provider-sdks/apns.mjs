// node-apn (@parse/node-apn), the APNs client Parse Server uses, sending
// the notification keel sent, against the fake:
//   node apns.mjs <host> <port> <CA file> <.p8 file> <key id> <team id>
//                 <device token> <headers JSON> <payload JSON>
// Token authentication; the headers are keel's apns-* headers, the payload
// keel's body. Prints what the provider reported.
import apn from '@parse/node-apn';

const [address, port, ca, key, keyId, teamId, device, headers, payload] = process.argv.slice(2);
const h = JSON.parse(headers);
const provider = new apn.Provider({
  token: { key, keyId, teamId },
  address,
  port: Number(port),
  ca,
  production: true,
  connectionRetryLimit: 1,
});
const note = new apn.Notification();
note.rawPayload = JSON.parse(payload);
note.topic = h['apns-topic'];
note.pushType = h['apns-push-type'];
note.priority = Number(h['apns-priority']);
note.expiry = Number(h['apns-expiration']);
note.collapseId = h['apns-collapse-id'];
note.id = h['apns-id'];
const result = await provider.send(note, device);
await provider.shutdown();
console.log(JSON.stringify({ sent: result.sent.length, failed: result.failed }));
