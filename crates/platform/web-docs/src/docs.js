// Starts Swagger UI on this service's own document (no inline script: the
// page's Content-Security-Policy allows scripts from this origin only).
import SwaggerUIBundle from "swagger-ui-dist/swagger-ui-bundle.js";

window.addEventListener("DOMContentLoaded", () => {
  window.ui = SwaggerUIBundle({
    url: "/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    tryItOutEnabled: false,
  });
});
